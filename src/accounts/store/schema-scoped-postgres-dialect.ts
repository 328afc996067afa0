import { PostgresDialect, PostgresIntrospector, sql } from 'kysely';
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE } from 'kysely/migration';
import type { DatabaseIntrospector, DatabaseMetadataOptions, Kysely, PostgresDialectConfig, SchemaMetadata, TableMetadata } from 'kysely';

interface ColumnRow {
  table: string;
  table_type: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  identity: string;
}

/**
 * Looks at one schema's tables only. Kysely's migrator asks the introspector whether its tables
 * exist, and the stock PostgreSQL introspector answers by listing every column of every schema in
 * the database, calling `pg_get_serial_sequence` and `has_schema_privilege` on each. Those
 * functions read the catalog as it is now, not as the query's snapshot saw it: when anything else
 * on the database drops a schema or a column meanwhile (another service, another test, a replica's
 * cleanup), the scan fails with "column … does not exist" and svc refuses to start. This answer is
 * one plain catalog join under one snapshot, limited to the store's schema, so it cannot race and
 * costs the same on a database with thousands of tables.
 */
export class SchemaScopedIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #schema: string;
  readonly #stock: PostgresIntrospector;

  constructor(db: Kysely<unknown>, schema: string) {
    this.#db = db;
    this.#schema = schema;
    this.#stock = new PostgresIntrospector(db);
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    // A plain read of pg_namespace: no per-row catalog functions, nothing to race.
    return this.#stock.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as table_type, a.attname as "column",
             typ.typname as "type", tns.nspname as type_schema,
             a.attnotnull as not_null, a.atthasdef as has_default, a.attidentity as "identity"
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
       where ns.nspname = ${this.#schema}
         and c.relkind in ('r', 'v', 'p', 'f')
         and a.attnum > 0 and not a.attisdropped
       order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && (row.table === DEFAULT_MIGRATION_TABLE || row.table === DEFAULT_MIGRATION_LOCK_TABLE)) continue;
      let table = tables.get(row.table);
      if (table === undefined) {
        table = { name: row.table, schema: this.#schema, isView: row.table_type === 'v', isForeign: row.table_type === 'f', columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        // Identity columns are the auto-incrementing kind this schema uses; serial defaults would
        // need pg_get_serial_sequence, the very call that races.
        isAutoIncrementing: row.identity !== '',
      });
    }
    return [...tables.values()];
  }
}

/** Kysely's PostgreSQL dialect whose introspector (and so its migrator) sees one schema only. */
export class SchemaScopedPostgresDialect extends PostgresDialect {
  readonly #schema: string;

  constructor(config: PostgresDialectConfig, schema: string) {
    super(config);
    this.#schema = schema;
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaScopedIntrospector(db, this.#schema);
  }
}
