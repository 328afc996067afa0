import { sql, type Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';

/**
 * The hosted schema, one list for both stores, applied in order at open by Kysely's Migrator.
 * Append new migrations; never edit one that has shipped. Column types are ones SQLite and
 * PostgreSQL both read the same way (`bigint` has INTEGER affinity in SQLite). The one place the
 * dialects differ is the trigger of 0002 (SQLite's trigger body against PostgreSQL's trigger
 * function), branched in `counterTrigger` below.
 */
type StoreKind = 'sqlite' | 'postgres';

/**
 * The monthly counter moves with the ledger row in the same statement: an AFTER INSERT trigger
 * adds the row's millijoules to (account, month). recordCharge is then one INSERT (atomic with
 * its trigger, no transaction to open and commit around two statements): a third of a hosted
 * request's time went to that transaction, and on PostgreSQL it was four round trips.
 */
async function counterTrigger(db: Kysely<unknown>, kind: StoreKind): Promise<void> {
  const upsert = sql`insert into usage_counters (account_id, month, used_mj) values (new.account_id, new.month, new.billable_mj)
    on conflict (account_id, month) do update set used_mj = usage_counters.used_mj + excluded.used_mj`;
  if (kind === 'sqlite') {
    await sql`create trigger ledger_counts_usage after insert on ledger begin ${upsert}; end`.execute(db);
    return;
  }
  await sql`create function ledger_counts_usage() returns trigger language plpgsql as $$
    begin
      ${upsert};
      return null;
    end $$`.execute(db);
  await sql`create trigger ledger_counts_usage after insert on ledger for each row execute function ledger_counts_usage()`.execute(db);
}

function migrationsFor(kind: StoreKind): Record<string, Migration> {
  return {
  '0001_hosted_schema': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('monthly_allowance_mj', 'bigint', (c) => c.notNull())
        .addColumn('hosted_entitlement', 'integer', (c) => c.notNull())
        .addColumn('enterprise', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('project', 'text')
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('last_four', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('sign_in_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_expiry').on('sessions').column('expires_at').execute();

      await db.schema
        .createTable('ledger')
        .addColumn('evidence_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
        .addColumn('project_id', 'text')
        .addColumn('idempotency_key', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('execution_plane', 'text', (c) => c.notNull())
        .addColumn('policy', 'text', (c) => c.notNull())
        .addColumn('privacy_tier', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('latency_ms', 'double precision', (c) => c.notNull())
        .addColumn('raw_mj', 'bigint')
        .addColumn('estimated_mj', 'bigint', (c) => c.notNull())
        .addColumn('billable_mj', 'bigint', (c) => c.notNull())
        .addColumn('fallback', 'integer', (c) => c.notNull())
        .addColumn('fallback_reason', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
        .addColumn('completion_tokens', 'integer', (c) => c.notNull())
        .addColumn('response', 'text')
        // NULLs are distinct in both engines, so requests without an Idempotency-Key never collide.
        .addUniqueConstraint('ledger_idempotency', ['account_id', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('ledger_account_day').on('ledger').columns(['account_id', 'month', 'day']).execute();
      await db.schema.createIndex('ledger_account_key').on('ledger').columns(['account_id', 'key_id', 'month', 'created_at']).execute();
      await db.schema.createIndex('ledger_account_project').on('ledger').columns(['account_id', 'project_id', 'month', 'created_at']).execute();

      await db.schema
        .createTable('usage_counters')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('used_mj', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_counters_pk', ['account_id', 'month'])
        .execute();
    },
  },
  '0002_ledger_counter_trigger': {
    up: (db: Kysely<unknown>) => counterTrigger(db, kind),
  },
  // Signed route evidence (--pqc-transport with ML-DSA): kept so GET /evidence/:id returns it verifiable.
  '0003_ledger_route_signatures': {
    up: async (db: Kysely<unknown>) => {
      for (const column of ['signature_alg', 'signing_key_id', 'signature']) await db.schema.alterTable('ledger').addColumn(column, 'text').execute();
    },
  },
  // Operators disable accounts (svc admin accounts disable); plans cap their unrevoked keys (null: the plan's default).
  '0004_account_lifecycle': {
    up: async (db: Kysely<unknown>) => {
      await db.schema.alterTable('accounts').addColumn('disabled_at', 'bigint').execute();
      await db.schema.alterTable('accounts').addColumn('max_active_keys', 'integer').execute();
    },
  },
  // Joules held by running requests, shared by replicas (the embedded store keeps its own in memory).
  '0005_joule_reservations': {
    up: async (db: Kysely<unknown>) => {
      await db.schema
        .createTable('joule_reservations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('reserved_mj', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('joule_reservations_account').on('joule_reservations').columns(['account_id', 'month', 'expires_at']).execute();
      // svc_route now names (and signs) the key that made the request.
      await db.schema.alterTable('ledger').addColumn('route_key_id', 'text').execute();
    },
  },
  };
}

export function hostedMigrationProvider(kind: StoreKind): MigrationProvider {
  return { getMigrations: () => Promise.resolve(migrationsFor(kind)) };
}
