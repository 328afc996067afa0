import type { DatabaseSync } from 'node:sqlite';
import { DEFAULT_MIGRATION_TABLE } from 'kysely/migration';
import type pg from 'pg';
import { StoreVersionError, type StoreLocation } from '../../shared/store-version.ts';

/**
 * The hosted store's schema version is the list of migrations Kysely's Migrator records in its
 * table (`kysely_migration`, one row per applied migration). A store on which a newer svc applied
 * migrations this build does not know is refused here, before the Migrator runs (it would stop
 * with "corrupted migrations", and nothing of this build should write to that schema).
 */
export function refuseUnknownMigrations(where: StoreLocation, applied: readonly string[], known: readonly string[]): void {
  const knownSet = new Set(known);
  const unknown = applied.filter((name) => !knownSet.has(name)).sort();
  if (unknown.length === 0) return;
  const newestKnown = known.at(-1) ?? 'none';
  throw new StoreVersionError(where, `${unknown.at(-1)!} (${unknown.length} migration${unknown.length === 1 ? '' : 's'} this svc does not have)`, newestKnown);
}

/** The migrations an embedded store has applied; none when Kysely's table is not there yet (a new file). */
export function appliedSqliteMigrations(db: DatabaseSync): string[] {
  const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(DEFAULT_MIGRATION_TABLE);
  if (table === undefined) return [];
  return (db.prepare(`select name from ${DEFAULT_MIGRATION_TABLE}`).all() as { name: string }[]).map((row) => row.name);
}

/** The migrations applied in `schema` of a PostgreSQL database; none when Kysely's table is not there yet. */
export async function appliedPostgresMigrations(pool: pg.Pool, schema: string): Promise<string[]> {
  // Quoted as an identifier: a schema from current_schema() was not checked by the option's rule.
  const table = `"${schema.replaceAll('"', '""')}"."${DEFAULT_MIGRATION_TABLE}"`;
  const found = await pool.query<{ found: string | null }>('select to_regclass($1) as found', [table]);
  if (found.rows[0]?.found == null) return [];
  return (await pool.query<{ name: string }>(`select name from ${table}`)).rows.map((row) => row.name);
}

/** A PostgreSQL store as a message names it: host, port, database and schema, never the user or password. */
export function postgresLocation(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    return `PostgreSQL ${parsed.host}${parsed.pathname} (schema ${schema})`;
  } catch {
    return `PostgreSQL (schema ${schema})`;
  }
}
