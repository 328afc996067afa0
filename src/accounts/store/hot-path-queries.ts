import type { Kysely } from 'kysely';
import type { HostedDatabase, LedgerRow } from './hosted-database.ts';
import { accountColumns } from './account-rows.ts';
import { LEDGER_COLUMNS } from './ledger-rows.ts';
import { PreparedQuery } from './prepared-query.ts';

/*
 * The queries every hosted chat request makes (the key check, the allowance read, the ledger
 * row, last use), compiled once (prepared-query.ts says why). The insert's and the touch's SQL
 * also go to the embedded store's writer thread (ledger-writer.ts).
 */

/** The key check: the key, its account and the month's use, in one read. */
export function checkKeyQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(2, ([month, hash]) => db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .leftJoin('usage_counters', (join) => join.onRef('usage_counters.account_id', '=', 'accounts.id').on('usage_counters.month', '=', month!))
    .select([
      'usage_counters.used_mj',
      'api_keys.id as key_id', 'api_keys.scope', 'api_keys.name as key_name', 'api_keys.project', 'api_keys.prefix', 'api_keys.last_four',
      'api_keys.secret_hash', 'api_keys.created_at as key_created_at', 'api_keys.last_used_at', 'api_keys.revoked_at',
      ...accountColumns,
    ])
    .where('api_keys.secret_hash', '=', hash!));
}

/** The ledger row's insert; its values bind in LEDGER_COLUMNS' order (bench/hosted-ledger-ids.ts runs it too). */
export function insertLedgerQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(LEDGER_COLUMNS.length, (placeholders) => db
    .insertInto('ledger')
    .values(Object.fromEntries(LEDGER_COLUMNS.map((column, i) => [column, placeholders[i]])) as unknown as LedgerRow)
    .onConflict((oc) => oc.columns(['account_id', 'idempotency_key']).doNothing())
    .returning('evidence_id'));
}

/** An account's monthly allowance and its use this month (the embedded store's reservation reads it). */
export function allowanceQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(2, ([month, accountId]) => db
    .selectFrom('accounts')
    .leftJoin('usage_counters', (join) => join.onRef('usage_counters.account_id', '=', 'accounts.id').on('usage_counters.month', '=', month!))
    .select(['accounts.monthly_allowance_mj', 'usage_counters.used_mj'])
    .where('accounts.id', '=', accountId!));
}

/** A key's last_used_at, written only if it is older than the granularity (replicas race for it). */
export function touchQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(3, ([now, keyId, before]) => db
    .updateTable('api_keys')
    .set({ last_used_at: now as unknown as number })
    .where('id', '=', keyId!)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', before as unknown as number)])));
}
