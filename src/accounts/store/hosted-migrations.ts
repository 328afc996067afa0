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
const counterUpsert = sql`insert into usage_counters (account_id, month, used_mj) values (new.account_id, new.month, new.billable_mj)
    on conflict (account_id, month) do update set used_mj = usage_counters.used_mj + excluded.used_mj`;

async function counterTrigger(db: Kysely<unknown>, kind: StoreKind): Promise<void> {
  const upsert = counterUpsert;
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

/**
 * PostgreSQL's Joule reservations (0005): one function call to reserve, so grants of one account
 * are serialized across replicas for one statement, not across the round trips of a transaction.
 *
 * The lock is the account's row, taken FOR NO KEY UPDATE: that conflicts with another grant but
 * not with the key-share locks ledger inserts take on it (their foreign key), so a grant never
 * waits for a charge's commit. After the lock, one statement (one snapshot) reads what committed
 * before it: the month's use (the counter the ledger trigger moves) and the unexpired
 * reservations. A charge moves the counter and deletes its reservation in one statement (the
 * ledger trigger below), so that snapshot counts each request once, as held or as used. A
 * reservation its replica never settled simply stops counting when it expires.
 *
 * Reservation commits do not wait for the disk (synchronous_commit off, for those transactions
 * only): a reservation lost in a server crash only frees what it held. The ledger row, the bill,
 * is written durably as before.
 */
async function reservationFunctions(db: Kysely<unknown>): Promise<void> {
  await sql`create function svc_reserve_joules(p_account text, p_month text, p_want bigint, p_id text, p_now bigint, p_expires bigint)
    returns table (allowance_mj bigint, used_mj bigint, held_mj bigint, granted_mj bigint) language plpgsql as $$
    declare
      v_allowance bigint;
      v_used bigint;
      v_held bigint;
      v_granted bigint;
    begin
      perform set_config('synchronous_commit', 'off', true);
      select a.monthly_allowance_mj into v_allowance from accounts a where a.id = p_account for no key update;
      if v_allowance is null then
        return query select 0::bigint, 0::bigint, 0::bigint, 0::bigint;
        return;
      end if;
      -- One statement, one snapshot: a charge commits its use and deletes its reservation together,
      -- so it is seen once, as one or the other (two reads could miss it between them).
      select coalesce((select c.used_mj from usage_counters c where c.account_id = p_account and c.month = p_month), 0),
          coalesce((select sum(j.reserved_mj) from joule_reservations j where j.account_id = p_account and j.month = p_month and j.expires_at > p_now), 0)
        into v_used, v_held;
      v_granted := least(p_want, greatest(0, v_allowance - v_used - v_held));
      if v_granted > 0 then
        insert into joule_reservations (id, account_id, month, reserved_mj, expires_at) values (p_id, p_account, p_month, v_granted, p_expires);
      end if;
      return query select v_allowance, v_used, v_held, v_granted;
    end $$`.execute(db);
  // Deletes a reservation (its request failed before a charge); its commit does not wait for the disk either.
  await sql`create function svc_release_joules(p_id text) returns void language plpgsql as $$
    begin
      perform set_config('synchronous_commit', 'off', true);
      delete from joule_reservations where id = p_id;
    end $$`.execute(db);
  // A ledger row that settles a reservation deletes it in its own statement (its trigger), with the
  // counter's move: a charge is still one round trip.
  await sql`create or replace function ledger_counts_usage() returns trigger language plpgsql as $$
    begin
      ${counterUpsert};
      if new.reservation_id is not null then
        delete from joule_reservations where id = new.reservation_id;
      end if;
      return null;
    end $$`.execute(db);
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
      // The reservation a row settled (PostgreSQL's trigger releases it; null on the embedded store).
      await db.schema.alterTable('ledger').addColumn('reservation_id', 'text').execute();
      if (kind === 'postgres') await reservationFunctions(db);
    },
  },
  };
}

/** The migrations this build knows, in order: what a store it opens may have applied (refuse-unknown-migrations.ts). */
export function hostedMigrationNames(kind: StoreKind): string[] {
  return Object.keys(migrationsFor(kind)).sort();
}

export function hostedMigrationProvider(kind: StoreKind): MigrationProvider {
  return { getMigrations: () => Promise.resolve(migrationsFor(kind)) };
}
