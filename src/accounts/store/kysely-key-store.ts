import { sql, type Selectable } from 'kysely';
import type { AccountStore } from '../account-store.ts';
import type { Allowance } from '../allowance.ts';
import type { ApiKeyRecord, IssuedKey, KeyCheck, KeyHash, KeyStore, NewKey } from '../key-store.ts';
import { maxActiveKeysOf } from '../plan.ts';
import type { AccountRow } from './hosted-database.ts';
import { toAccount } from './account-rows.ts';
import { KEY_COLUMNS, newKeyRow, toKeyRecord } from './key-rows.ts';
import { allowanceOf, type AllowanceFigures } from './allowance-of.ts';
import { monthOf } from './energy-units.ts';
import { hashSecret, looksLikeKeySecret, sameHash } from './store-secrets.ts';
import type { StoreHandle } from './store-handle.ts';
import { UnknownAccountError } from './unknown-account-error.ts';
import { AccountDisabledError } from './account-disabled-error.ts';
import { KeyLimitReachedError } from './key-limit-reached-error.ts';

/** last_used_at is coarse on purpose: one write per key per minute, not one per request. */
const LAST_USED_GRANULARITY_MS = 60_000;
// Bounds the in-memory last-write map; clearing it only costs a few extra conditional updates.
const MAX_TOUCHED_KEYS = 100_000;

export interface KyselyKeyStoreOptions {
  /** Where issueKey finds the account it issues for. */
  accounts: Pick<AccountStore, 'getAccount'>;
  /**
   * Told of every allowance a key check read, with its figures: the embedded ledger keeps them
   * so the request's reservation need not read them again (kysely-ledger-store.ts).
   */
  onAllowanceRead?: ((allowance: Allowance, figures: AllowanceFigures) => void) | undefined;
}

/** API keys over Kysely: issued, capped, listed, revoked, and checked on the hot path. */
export class KyselyKeyStore implements KeyStore {
  readonly #handle: StoreHandle;
  readonly #accounts: Pick<AccountStore, 'getAccount'>;
  readonly #onAllowanceRead: ((allowance: Allowance, figures: AllowanceFigures) => void) | undefined;
  /** Key id -> when this instance last wrote its last_used_at (epoch ms). */
  readonly #touched = new Map<string, number>();

  constructor(handle: StoreHandle, options: KyselyKeyStoreOptions) {
    this.#handle = handle;
    this.#accounts = options.accounts;
    this.#onAllowanceRead = options.onAllowanceRead;
  }

  async issueKey(accountId: string, input: NewKey): Promise<IssuedKey> {
    const { row, secret } = newKeyRow(accountId, input);
    if ((await this.#accounts.getAccount(accountId)) === undefined) throw new UnknownAccountError(accountId);
    await this.#handle.db.insertInto('api_keys').values(row).execute();
    return { key: toKeyRecord(row), secret };
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    // secret_hash is left out of the select, not just of the mapping: it never leaves the store.
    const rows = await this.#handle.db
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'scope', 'name', 'project', 'prefix', 'last_four', 'created_at', 'last_used_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toKeyRecord);
  }

  async listKeyHashes(accountId?: string): Promise<KeyHash[]> {
    let query = this.#handle.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await query.execute();
    return rows.map(({ secret_hash, ...row }) => ({ key: toKeyRecord(row), secretSha256: secret_hash }));
  }

  async revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    // Revoking twice keeps the first revocation time: DELETE is idempotent for the caller.
    await this.#handle.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    const row = await this.#handle.db
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'scope', 'name', 'project', 'prefix', 'last_four', 'created_at', 'last_used_at', 'revoked_at'])
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toKeyRecord(row);
  }

  async checkKey(secret: string): Promise<KeyCheck> {
    if (typeof secret !== 'string' || !looksLikeKeySecret(secret)) return { status: 'unknown' };
    const hash = hashSecret(secret);
    const month = monthOf(new Date());
    const row = (await this.#handle.rows(this.#handle.checkKeyQuery.bind([month, hash])))[0];
    if (row === undefined || !sameHash(row.secret_hash, hash)) return { status: 'unknown' };
    const key = toKeyRecord({
      id: row.key_id, account_id: row.id, scope: row.scope, name: row.key_name, project: row.project, prefix: row.prefix,
      last_four: row.last_four, created_at: row.key_created_at, last_used_at: row.last_used_at, revoked_at: row.revoked_at,
    });
    if (key.revokedAt !== null) return { status: 'revoked', key };
    const account = toAccount(row);
    // Refused before it counts as use: a disabled account's key is not used.
    if (account.disabledAt !== null) return { status: 'account_disabled', key, account };
    key.lastUsedAt = await this.#touch(key.id, key.lastUsedAt);
    const allowanceMj = Number(row.monthly_allowance_mj);
    const usedMj = row.used_mj === null ? 0 : Number(row.used_mj);
    const allowance = allowanceOf(month, allowanceMj, usedMj);
    this.#onAllowanceRead?.(allowance, { accountId: account.id, allowanceMj, usedMj });
    return { status: 'valid', key, account, allowance };
  }

  /** Records use at most once a minute per key, across replicas too (the update is conditional). */
  async #touch(keyId: string, stored: Date | null): Promise<Date | null> {
    const now = Date.now();
    const last = Math.max(this.#touched.get(keyId) ?? 0, stored?.getTime() ?? 0);
    if (now - last < LAST_USED_GRANULARITY_MS) return stored;
    if (this.#touched.size >= MAX_TOUCHED_KEYS) this.#touched.clear();
    this.#touched.set(keyId, now);
    // On the embedded store, through the writer thread when it runs: a write on this connection
    // would wait on the event loop for the writer's transaction (ledger-writer.ts).
    await this.#handle.write('touch', this.#handle.touchQuery.bind([now, keyId, now - LAST_USED_GRANULARITY_MS]));
    return new Date(now);
  }

  // The key cap (migration 0004).

  async issueKeyWithinCap(accountId: string, input: NewKey): Promise<IssuedKey> {
    const { row, secret } = newKeyRow(accountId, input);
    const db = this.#handle.db;
    if (this.#handle.kind === 'postgres') {
      await db.transaction().execute(async (trx) => {
        // The account row's lock serializes every capped issue of the account, on every replica;
        // one that waited here counts afresh below (read committed: each statement sees what committed).
        const cap = await this.#capOf(trx.selectFrom('accounts').selectAll().where('id', '=', accountId).forUpdate(), accountId);
        const active = await trx.selectFrom('api_keys').select(sql<number>`count(*)`.as('n')).where('account_id', '=', accountId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
        if (Number(active.n) >= cap) throw new KeyLimitReachedError(accountId, cap);
        await trx.insertInto('api_keys').values(row).execute();
      });
    } else {
      // One statement, the count inside it: SQLite takes its write lock when an INSERT starts, so
      // no other connection or process inserts between the count and the row. No transaction is
      // held across an await (two connections in one process would wait on each other).
      const cap = await this.#capOf(db.selectFrom('accounts').selectAll().where('id', '=', accountId), accountId);
      const result = await db
        .insertInto('api_keys')
        .columns(KEY_COLUMNS)
        .expression(db
          .selectNoFrom((eb) => KEY_COLUMNS.map((column) => eb.val(row[column]).as(column)))
          .where((eb) => eb(eb.selectFrom('api_keys').select(sql<number>`count(*)`.as('n')).where('account_id', '=', accountId).where('revoked_at', 'is', null), '<', cap)))
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) throw new KeyLimitReachedError(accountId, cap);
    }
    return { key: toKeyRecord(row), secret };
  }

  /** The key cap of a live account, read by `query`; its errors when there is none or it is disabled. */
  async #capOf(query: { executeTakeFirst(): Promise<Selectable<AccountRow> | undefined> }, accountId: string): Promise<number> {
    const found = await query.executeTakeFirst();
    if (found === undefined) throw new UnknownAccountError(accountId);
    const account = toAccount(found);
    if (account.disabledAt !== null) throw new AccountDisabledError(accountId);
    return maxActiveKeysOf(account.plan);
  }
}
