import { join } from 'node:path';
import { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { SqliteDialect } from 'kysely-sqlite';
import { CachingDatabase } from './caching-database.ts';
import { makePrivateDirSync, preparePrivateDatabase } from '../../shared/private-files.ts';
import { StoreVersionError } from '../../shared/store-version.ts';
import { WalCheckpointer } from '../../shared/wal-checkpointer.ts';
import pg from 'pg';
import type { HostedStore } from '../hosted-store.ts';
import type { HostedDatabase } from './hosted-database.ts';
import { hostedMigrationNames, hostedMigrationProvider } from './hosted-migrations.ts';
import { appliedPostgresMigrations, appliedSqliteMigrations, postgresLocation, refuseUnknownMigrations } from './refuse-unknown-migrations.ts';
import { kyselyHostedStore } from './kysely-hosted-store.ts';
import { SchemaScopedPostgresDialect } from './schema-scoped-postgres-dialect.ts';
import { SqliteHotPath } from './sqlite-hot-path.ts';
import { LedgerWriter } from './ledger-writer.ts';
import { sqliteConnectionPragmas } from './sqlite-connection-settings.ts';

export interface OpenHostedStoreOptions {
  /** The svc data dir: the embedded store lives at `<dataDir>/hosted/hosted.db`. */
  dataDir: string;
  /** `postgres://…` for a store shared by replicas; absent or empty: embedded SQLite. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to keep every table in (created if missing); default `public`. */
  schema?: string | undefined;
  /**
   * PostgreSQL connections this process may hold; default 10 (pg's own default). A hosted chat
   * request makes three queries (key check, Joule reservation, ledger row); every replica's pool
   * counts against the server's max_connections.
   */
  poolSize?: number | undefined;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const POSTGRES_URL = /^postgres(?:ql)?:\/\//;
const SQLITE_BUSY_TIMEOUT_MS = 5000;
const POSTGRES_POOL_SIZE = 10;

/**
 * Opens the hosted store and brings its schema up to date (migrations run here, at every start).
 * Rejects with a clear message on a URL that is not PostgreSQL's or a schema name that is not a
 * plain lower-case identifier (it goes into `search_path`, so it is never quoted user text).
 */
export async function openHostedStore(options: OpenHostedStoreOptions): Promise<HostedStore> {
  const url = options.databaseUrl;
  if (url === undefined || url === '') return openSqlite(options.dataDir);
  if (!POSTGRES_URL.test(url)) throw new TypeError('the hosted database URL must start with postgres:// or postgresql://');
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new TypeError('the hosted database schema must be a lower-case identifier (letters, digits, underscores)');
  }
  const poolSize = options.poolSize ?? POSTGRES_POOL_SIZE;
  if (!Number.isSafeInteger(poolSize) || poolSize < 1 || poolSize > 1000) throw new RangeError('poolSize must be a whole number from 1 to 1000');
  return openPostgres(url, options.schema, poolSize);
}

async function openSqlite(dataDir: string): Promise<HostedStore> {
  // Accounts, keys' hashes and the ledger are the operator's alone: the data dir and the
  // store's folder 0700, the database 0600 before SQLite opens it, so its -wal and -shm (which
  // the ledger writer and the checkpointer threads open too) are 0600 as well.
  makePrivateDirSync(dataDir);
  const path = join(dataDir, 'hosted', 'hosted.db');
  preparePrivateDatabase(path);
  const database = new CachingDatabase(path);
  const known = hostedMigrationNames('sqlite');
  try {
    // A file a newer svc migrated is refused before the pragmas and the checkpointer touch it.
    refuseUnknownMigrations({ store: 'hosted store', file: path }, appliedSqliteMigrations(database), known);
  } catch (error) {
    database.close();
    throw error;
  }
  // WAL with synchronous=NORMAL (sqlite-connection-settings.ts says why).
  database.exec(`PRAGMA journal_mode = WAL; ${sqliteConnectionPragmas(SQLITE_BUSY_TIMEOUT_MS)}`);
  // Checkpoints run on their own thread (wal-checkpointer.ts says why).
  const checkpointer = new WalCheckpointer(path);
  const db = new Kysely<HostedDatabase>({ dialect: new SqliteDialect({ database }) });
  try {
    await migrate(db, 'sqlite', undefined, () => refuseUnknownMigrations({ store: 'hosted store', file: path }, appliedSqliteMigrations(database), known));
  } catch (error) {
    await db.destroy();
    await checkpointer.stop();
    throw error;
  }
  return kyselyHostedStore(db, 'sqlite', {
    onClose: () => checkpointer.stop(),
    sqlite: {
      hotPath: new SqliteHotPath(database),
      openLedgerWriter: (statements) => new LedgerWriter({ path, statements, busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS }),
    },
  });
}

/** int8 (counts, bigint columns) and numeric (PostgreSQL's sum of bigints) as numbers, never strings. */
function parseSafeNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`hosted store: ${text} is past the safe integer range`);
  return value;
}

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return parseSafeNumber;
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  },
};

async function openPostgres(url: string, schema: string | undefined, poolSize: number): Promise<HostedStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Per-connection search_path keeps every query unqualified and lets tests isolate in a schema.
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    types: pgTypes as pg.CustomTypesConfig,
  });
  // An idle connection dropped by the server must not crash the process: the next query reconnects.
  pool.on('error', () => {});
  // Kysely's migrator, given no schema, takes a migration table in ANY schema of the database as
  // its own (and then fails to find it on the search path): name the schema tables are created
  // in, the first of the connection's search path (which a URL's `options` may have set).
  let migrationSchema = schema;
  if (migrationSchema === undefined) {
    try {
      migrationSchema = (await pool.query<{ schema: string | null }>('select current_schema() as schema')).rows[0]?.schema ?? undefined;
    } catch (error) {
      await pool.end();
      throw error;
    }
    if (migrationSchema === undefined) {
      await pool.end();
      throw new Error('the hosted database has no schema to create tables in: none on the search path exists (set search_path in the URL options)');
    }
  }
  const schemaName = migrationSchema;
  const where = { store: 'hosted store', file: postgresLocation(url, schemaName) };
  const known = hostedMigrationNames('postgres');
  const refuseNewer = async (): Promise<void> => refuseUnknownMigrations(where, await appliedPostgresMigrations(pool, schemaName), known);
  try {
    await refuseNewer();
  } catch (error) {
    await pool.end();
    throw error;
  }
  const db = new Kysely<HostedDatabase>({ dialect: new SchemaScopedPostgresDialect({ pool }, migrationSchema) });
  await migrate(db, 'postgres', migrationSchema, refuseNewer);
  return kyselyHostedStore(db, 'postgres');
}

/**
 * Kysely's PostgreSQL adapter holds an advisory lock while migrating: replicas starting together take turns.
 * `refuseNewer` was checked before; it is asked again when the Migrator fails, since a newer
 * replica may have migrated the database in between (the Migrator then says "corrupted migrations").
 */
async function migrate(db: Kysely<HostedDatabase>, kind: 'sqlite' | 'postgres', schema: string | undefined, refuseNewer: () => void | Promise<void>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: hostedMigrationProvider(kind),
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const refusal = await Promise.resolve().then(refuseNewer).then(() => undefined, (e: unknown) => e);
    await db.destroy();
    // Only the refusal replaces the Migrator's error (a failed look at the table says nothing new).
    if (refusal instanceof StoreVersionError) throw refusal;
    throw error instanceof Error ? error : new Error(`hosted store migration failed: ${String(error)}`);
  }
}
