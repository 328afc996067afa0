import { sql, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { Account } from '../account-store.ts';
import type { Allowance } from '../allowance.ts';
import type { HostedStore } from '../hosted-store.ts';
import type { ApiKeyRecord, IssuedKey, KeyCheck, KeyHash, KeyScope } from '../key-store.ts';
import type { ChargeInput, ChargeResult, JouleReservation, LedgerEntry, ReserveInput, ReserveResult } from '../ledger-store.ts';
import type { Plan } from '../plan.ts';
import type { Session } from '../session-store.ts';
import type { UsageQuery, UsageReport } from '../usage-store.ts';
import { MAX_ACTIVE_KEYS_LIMIT, maxActiveKeysOf } from '../plan.ts';
import { MAX_USAGE_PROJECTS } from '../usage-store.ts';
import { newId } from '../../shared/new-id.ts';
import type { AccountRow, ApiKeyRow, HostedDatabase, LedgerRow } from './hosted-database.ts';
import { PreparedQuery } from './prepared-query.ts';
import type { SqliteHotPath } from './sqlite-hot-path.ts';
import { LedgerWriterBusyError, LedgerWriterUnavailableError, type LedgerWriter } from './ledger-writer.ts';
import { dayOf, isMonth, monthOf, toJoules, toMillijoules } from './energy-units.ts';
import { hashSecret, KEY_PREFIXES, looksLikeKeySecret, looksLikeSessionToken, looksLikeToken, newKeySecret, newSessionToken, randomToken, sameHash } from './store-secrets.ts';
import { UnknownAccountError } from './unknown-account-error.ts';
import { HeldJoules } from './held-joules.ts';
import { AccountDisabledError } from './account-disabled-error.ts';
import { KeyLimitReachedError } from './key-limit-reached-error.ts';

/** How long a reservation its replica never settled keeps counting (longer than any request runs). */
const DEFAULT_RESERVATION_TTL_MS = 60 * 60_000;
/** How often a store deletes expired reservations (housekeeping: they stop counting when they expire). */
const RESERVATION_SWEEP_MS = 60_000;

/** last_used_at is coarse on purpose: one write per key per minute, not one per request. */
const LAST_USED_GRANULARITY_MS = 60_000;
const DEFAULT_EVIDENCE_LIMIT = 50;
const MAX_EVIDENCE_LIMIT = 1000;
// Bounds the in-memory last-write map; clearing it only costs a few extra conditional updates.
const MAX_TOUCHED_KEYS = 100_000;

const accountColumns = [
  'accounts.id', 'accounts.name', 'accounts.monthly_allowance_mj', 'accounts.hosted_entitlement', 'accounts.enterprise', 'accounts.created_at',
  'accounts.disabled_at', 'accounts.max_active_keys',
] as const;

function toAccount(row: Selectable<AccountRow>): Account {
  return {
    id: row.id,
    name: row.name,
    plan: {
      monthlyJouleAllowance: toJoules(Number(row.monthly_allowance_mj)),
      hostedEntitlement: Number(row.hosted_entitlement) === 1,
      enterprise: Number(row.enterprise) === 1,
      // Only a plan's own cap is listed; without one, maxActiveKeysOf gives its default.
      ...(row.max_active_keys === null ? {} : { maxActiveKeys: Number(row.max_active_keys) }),
    },
    createdAt: new Date(Number(row.created_at)),
    disabledAt: row.disabled_at === null ? null : new Date(Number(row.disabled_at)),
  };
}

function toKeyRecord(row: Omit<ApiKeyRow, 'secret_hash'>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    scope: row.scope as KeyScope,
    name: row.name,
    project: row.project,
    prefix: row.prefix,
    lastFour: row.last_four,
    createdAt: new Date(Number(row.created_at)),
    lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)),
    revokedAt: row.revoked_at === null ? null : new Date(Number(row.revoked_at)),
  };
}

function toLedgerEntry(row: LedgerRow): LedgerEntry {
  return {
    evidenceId: row.evidence_id,
    accountId: row.account_id,
    keyId: row.key_id,
    projectId: row.project_id,
    idempotencyKey: row.idempotency_key,
    createdAt: new Date(Number(row.created_at)),
    route: {
      execution_plane: row.execution_plane,
      policy: row.policy,
      privacy_tier: row.privacy_tier,
      model: row.model,
      provider: row.provider,
      latency_ms: Number(row.latency_ms),
      raw_joules: row.raw_mj === null ? null : toJoules(Number(row.raw_mj)),
      estimated_joules: toJoules(Number(row.estimated_mj)),
      billable_joules: toJoules(Number(row.billable_mj)),
      fallback: Number(row.fallback) === 1,
      fallback_reason: row.fallback_reason,
      ...(row.route_key_id === null ? {} : { key_id: row.route_key_id }),
      evidence_id: row.evidence_id,
      ...(row.signature === null ? {} : { signature_alg: row.signature_alg ?? '', signing_key_id: row.signing_key_id ?? '', signature: row.signature }),
    },
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    outcome: row.outcome,
    response: row.response === null ? null : JSON.parse(row.response) as unknown,
  };
}

function planColumns(plan: Partial<Plan>): Partial<Pick<AccountRow, 'monthly_allowance_mj' | 'hosted_entitlement' | 'enterprise' | 'max_active_keys'>> {
  const columns: Partial<Pick<AccountRow, 'monthly_allowance_mj' | 'hosted_entitlement' | 'enterprise' | 'max_active_keys'>> = {};
  if (plan.monthlyJouleAllowance !== undefined) columns.monthly_allowance_mj = toMillijoules(plan.monthlyJouleAllowance, 'monthlyJouleAllowance');
  if (plan.hostedEntitlement !== undefined) columns.hosted_entitlement = plan.hostedEntitlement ? 1 : 0;
  if (plan.enterprise !== undefined) columns.enterprise = plan.enterprise ? 1 : 0;
  // null puts the plan back on its default cap; undefined leaves it as it is.
  if (plan.maxActiveKeys !== undefined) columns.max_active_keys = plan.maxActiveKeys === null ? null : maxActiveKeysColumn(plan.maxActiveKeys);
  return columns;
}

function maxActiveKeysColumn(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_ACTIVE_KEYS_LIMIT) throw new RangeError(`maxActiveKeys must be an integer from 0 to ${MAX_ACTIVE_KEYS_LIMIT}`);
  return value;
}

/** Every column of a key row (issueKeyWithinCap's INSERT … SELECT names them). */
const KEY_COLUMNS = ['id', 'account_id', 'scope', 'name', 'project', 'prefix', 'last_four', 'secret_hash', 'created_at', 'last_used_at', 'revoked_at'] as const satisfies readonly (keyof ApiKeyRow)[];

/** A new key's row and its secret (issueKey and issueKeyWithinCap insert it). */
function newKeyRow(accountId: string, input: { scope: KeyScope; name?: string | null | undefined; project?: string | null | undefined }): { row: ApiKeyRow; secret: string } {
  if (!KEY_PREFIXES.has(input.scope)) throw new TypeError(`unknown key scope: ${String(input.scope)}`);
  const secret = newKeySecret(input.scope);
  const row: ApiKeyRow = {
    id: newId('key_'),
    account_id: accountId,
    scope: input.scope,
    name: input.name ?? null,
    project: input.project ?? null,
    prefix: secret.slice(0, 12),
    last_four: secret.slice(-4),
    secret_hash: hashSecret(secret),
    created_at: Date.now(),
    last_used_at: null,
    revoked_at: null,
  };
  return { row, secret };
}

function requireTtl(ttlMs: number, what: string): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`${what} must be a positive number of milliseconds`);
}

function nonNegativeInteger(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer`);
  return value;
}

/**
 * The HostedStore over Kysely: the same queries for SQLite and PostgreSQL (open-hosted-store.ts
 * builds the Kysely instance, runs the migrations and picks `kind`).
 */
/** Every column of a ledger row, in the order the prepared insert binds them. */
export const LEDGER_COLUMNS = [
  'evidence_id', 'account_id', 'key_id', 'project_id', 'idempotency_key', 'created_at', 'month', 'day',
  'execution_plane', 'policy', 'privacy_tier', 'model', 'provider', 'latency_ms', 'raw_mj', 'estimated_mj',
  'billable_mj', 'fallback', 'fallback_reason', 'outcome', 'prompt_tokens', 'completion_tokens', 'response',
  'signature_alg', 'signing_key_id', 'signature', 'route_key_id', 'reservation_id',
] as const satisfies readonly (keyof LedgerRow)[];
// A column added to LedgerRow and not listed above is a compile error here, not a missing value.
const ledgerColumnsComplete: [Exclude<keyof LedgerRow, (typeof LEDGER_COLUMNS)[number]>] extends [never] ? true : never = true;
void ledgerColumnsComplete;

/** The hosted hot path's two queries, compiled once (prepared-query.ts says why). */
function checkKeyQuery(db: Kysely<HostedDatabase>) {
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
function allowanceQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(2, ([month, accountId]) => db
    .selectFrom('accounts')
    .leftJoin('usage_counters', (join) => join.onRef('usage_counters.account_id', '=', 'accounts.id').on('usage_counters.month', '=', month!))
    .select(['accounts.monthly_allowance_mj', 'usage_counters.used_mj'])
    .where('accounts.id', '=', accountId!));
}

/** A key's last_used_at, written only if it is older than the granularity (replicas race for it). */
function touchQuery(db: Kysely<HostedDatabase>) {
  return new PreparedQuery(3, ([now, keyId, before]) => db
    .updateTable('api_keys')
    .set({ last_used_at: now as unknown as number })
    .where('id', '=', keyId!)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', before as unknown as number)])));
}

function allowanceOf(month: string, allowanceMj: number, usedMj: number): Allowance {
  return {
    month,
    allowanceJoules: toJoules(allowanceMj),
    usedJoules: toJoules(usedMj),
    remainingJoules: toJoules(Math.max(0, allowanceMj - usedMj)),
  };
}

export interface KyselyHostedStoreOptions {
  /** Runs after the database is closed (the SQLite store's checkpointer stops there). */
  onClose?: (() => Promise<void>) | undefined;
  /** The embedded store's own: its connection for the hot path's queries, and the ledger writer thread. */
  sqlite?: {
    hotPath: SqliteHotPath;
    /** Starts the thread that writes ledger rows and last_used_at (ledger-writer.ts), given their SQL. */
    openLedgerWriter?: ((statements: { insert: string; touch: string }) => LedgerWriter) | undefined;
  } | undefined;
}

export class KyselyHostedStore implements HostedStore {
  readonly kind: 'sqlite' | 'postgres';
  readonly #db: Kysely<HostedDatabase>;
  /** Key id -> when this instance last wrote its last_used_at (epoch ms). */
  readonly #touched = new Map<string, number>();

  readonly #onClose: (() => Promise<void>) | undefined;
  readonly #hot: SqliteHotPath | undefined;
  readonly #ledgerWriter: LedgerWriter | undefined;

  readonly #checkKeyQuery: ReturnType<typeof checkKeyQuery>;
  readonly #insertLedgerQuery: ReturnType<typeof insertLedgerQuery>;
  readonly #touchQuery: ReturnType<typeof touchQuery>;
  readonly #allowanceQuery: ReturnType<typeof allowanceQuery>;
  /** The embedded store's reservations (one process serves it); PostgreSQL keeps them in joule_reservations. */
  readonly #held: HeldJoules | undefined;
  /** Allowances checkKey read (embedded store): their figures and the release count they were read at. */
  readonly #allowanceReads = new WeakMap<Allowance, { accountId: string; allowanceMj: number; usedMj: number; releases: number }>();
  #lastReservationSweep = 0;

  constructor(db: Kysely<HostedDatabase>, kind: 'sqlite' | 'postgres', options: KyselyHostedStoreOptions = {}) {
    this.#db = db;
    this.#checkKeyQuery = checkKeyQuery(db);
    this.#insertLedgerQuery = insertLedgerQuery(db);
    this.#touchQuery = touchQuery(db);
    this.#allowanceQuery = allowanceQuery(db);
    this.kind = kind;
    this.#held = kind === 'sqlite' ? new HeldJoules() : undefined;
    this.#onClose = options.onClose;
    this.#hot = options.sqlite?.hotPath;
    this.#ledgerWriter = options.sqlite?.openLedgerWriter?.({ insert: this.#insertLedgerQuery.sql, touch: this.#touchQuery.sql });
  }

  /** A compiled hot-path query: straight on node:sqlite where it can, through Kysely otherwise. */
  async #rows<Row>(query: CompiledQuery<Row>): Promise<Row[]> {
    return this.#hot?.all(query) ?? (await this.#db.executeQuery(query)).rows as Row[];
  }

  async createAccount(input: { name: string; plan: Plan }): Promise<Account> {
    const row: AccountRow = {
      id: newId('acct_'),
      name: input.name,
      monthly_allowance_mj: toMillijoules(input.plan.monthlyJouleAllowance, 'monthlyJouleAllowance'),
      hosted_entitlement: input.plan.hostedEntitlement ? 1 : 0,
      enterprise: input.plan.enterprise ? 1 : 0,
      created_at: Date.now(),
      disabled_at: null,
      max_active_keys: input.plan.maxActiveKeys === undefined || input.plan.maxActiveKeys === null ? null : maxActiveKeysColumn(input.plan.maxActiveKeys),
    };
    await this.#db.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  async getAccount(accountId: string): Promise<Account | undefined> {
    const row = await this.#db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.#db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toAccount);
  }

  async setPlan(accountId: string, plan: Partial<Plan>): Promise<Account | undefined> {
    const columns = planColumns(plan);
    if (Object.keys(columns).length === 0) return this.getAccount(accountId);
    const row = await this.#db.updateTable('accounts').set(columns).where('id', '=', accountId).returningAll().executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async issueKey(accountId: string, input: { scope: KeyScope; name?: string | null | undefined; project?: string | null | undefined }): Promise<IssuedKey> {
    const { row, secret } = newKeyRow(accountId, input);
    if ((await this.getAccount(accountId)) === undefined) throw new UnknownAccountError(accountId);
    await this.#db.insertInto('api_keys').values(row).execute();
    return { key: toKeyRecord(row), secret };
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    // secret_hash is left out of the select, not just of the mapping: it never leaves the store.
    const rows = await this.#db
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'scope', 'name', 'project', 'prefix', 'last_four', 'created_at', 'last_used_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toKeyRecord);
  }

  async listKeyHashes(accountId?: string): Promise<KeyHash[]> {
    let query = this.#db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await query.execute();
    return rows.map(({ secret_hash, ...row }) => ({ key: toKeyRecord(row), secretSha256: secret_hash }));
  }

  async revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    // Revoking twice keeps the first revocation time: DELETE is idempotent for the caller.
    await this.#db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    const row = await this.#db
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
    const row = (await this.#rows(this.#checkKeyQuery.bind([month, hash])))[0];
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
    if (this.#held !== undefined) this.#allowanceReads.set(allowance, { accountId: account.id, allowanceMj, usedMj, releases: this.#held.releases });
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
    await this.#write('touch', this.#touchQuery.bind([now, keyId, now - LAST_USED_GRANULARITY_MS]));
    return new Date(now);
  }

  /**
   * A hot-path write; the rows it returned. The embedded store hands it to its writer thread,
   * except when the caller is `alone` and the thread idle (it then holds no lock): this
   * connection writes at once. It writes here too when the thread cannot (it failed), after
   * `alreadyStored` says the thread did not commit it before it went.
   */
  async #write(statement: 'insert' | 'touch', query: CompiledQuery, options: { alone?: boolean; alreadyStored?: () => Promise<boolean> } = {}): Promise<number> {
    const writer = this.#ledgerWriter;
    if (writer?.available === true && !(options.alone === true && writer.idle)) {
      try {
        return await this.#writeOnThread(writer, statement, query.parameters as unknown[]);
      } catch (error) {
        if (!(error instanceof LedgerWriterUnavailableError)) throw error;
        if (await options.alreadyStored?.() === true) return 1;
      }
    }
    return (await this.#rows(query)).length;
  }

  async #writeOnThread(writer: LedgerWriter, statement: 'insert' | 'touch', values: unknown[]): Promise<number> {
    try {
      return await writer.write(statement, values);
    } catch (error) {
      // Kept busy past busy_timeout (another process's long transaction): once more on the
      // thread, never here, where the same wait would hold the event loop.
      if (!(error instanceof LedgerWriterBusyError)) throw error;
      return writer.write(statement, values);
    }
  }

  async createSignInToken(accountId: string, ttlMs: number): Promise<{ token: string; expiresAt: Date }> {
    requireTtl(ttlMs, 'ttlMs');
    const account = await this.getAccount(accountId);
    if (account === undefined) throw new UnknownAccountError(accountId);
    if (account.disabledAt !== null) throw new AccountDisabledError(accountId);
    const now = Date.now();
    // Sign-in links are an operator action, rare enough to sweep expired credentials here.
    await this.#db.deleteFrom('sign_in_tokens').where('expires_at', '<=', now).execute();
    await this.#db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
    const token = randomToken();
    const expiresAt = now + ttlMs;
    await this.#db.insertInto('sign_in_tokens').values({ token_hash: hashSecret(token), account_id: accountId, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    return { token, expiresAt: new Date(expiresAt) };
  }

  async redeemSignInToken(token: string, sessionTtlMs: number): Promise<{ session: Session; token: string } | undefined> {
    requireTtl(sessionTtlMs, 'sessionTtlMs');
    if (typeof token !== 'string' || !looksLikeToken(token)) return undefined;
    const hash = hashSecret(token);
    return this.#db.transaction().execute(async (trx) => {
      const now = Date.now();
      // One conditional update is the one-time guarantee: of two concurrent redeems, the second
      // finds used_at set (PostgreSQL re-checks the row after the first commits) and gets nothing.
      const used = await trx
        .updateTable('sign_in_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        // A link of a disabled account signs nobody in (disabling deletes them too; this covers a race).
        .where((eb) => eb.not(eb.exists(eb.selectFrom('accounts').select('accounts.id').whereRef('accounts.id', '=', 'sign_in_tokens.account_id').where('accounts.disabled_at', 'is not', null))))
        .returning(['account_id', 'token_hash'])
        .executeTakeFirst();
      if (used === undefined || !sameHash(used.token_hash, hash)) return undefined;
      const sessionToken = newSessionToken();
      const session: Session = { id: newId('sess_'), accountId: used.account_id, createdAt: new Date(now), expiresAt: new Date(now + sessionTtlMs) };
      await trx
        .insertInto('sessions')
        .values({ id: session.id, token_hash: hashSecret(sessionToken), account_id: session.accountId, created_at: now, expires_at: now + sessionTtlMs })
        .execute();
      return { session, token: sessionToken };
    });
  }

  async checkSession(token: string): Promise<{ session: Session; account: Account } | undefined> {
    if (typeof token !== 'string' || !looksLikeSessionToken(token)) return undefined;
    const hash = hashSecret(token);
    const row = await this.#db
      .selectFrom('sessions')
      .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
      .select(['sessions.id as session_id', 'sessions.token_hash', 'sessions.created_at as session_created_at', 'sessions.expires_at', ...accountColumns])
      .where('sessions.token_hash', '=', hash)
      .where('sessions.expires_at', '>', Date.now())
      // Disabling deletes the account's sessions; this also refuses one made in a race with it.
      .where('accounts.disabled_at', 'is', null)
      .executeTakeFirst();
    if (row === undefined || !sameHash(row.token_hash, hash)) return undefined;
    return {
      session: { id: row.session_id, accountId: row.id, createdAt: new Date(Number(row.session_created_at)), expiresAt: new Date(Number(row.expires_at)) },
      account: toAccount(row),
    };
  }

  async endSession(token: string): Promise<void> {
    if (typeof token !== 'string' || !looksLikeSessionToken(token)) return;
    await this.#db.deleteFrom('sessions').where('token_hash', '=', hashSecret(token)).execute();
  }

  async allowance(accountId: string, at: Date = new Date()): Promise<Allowance> {
    return this.#allowanceFor(accountId, monthOf(at));
  }

  /** An unknown account has no allowance (0 of 0), not an error: the caller checked the key already. */
  async #allowanceFor(accountId: string, month: string): Promise<Allowance> {
    const row = (await this.#rows(this.#allowanceQuery.bind([month, accountId])))[0];
    const allowanceMj = row === undefined ? 0 : Number(row.monthly_allowance_mj);
    const usedMj = row?.used_mj === null || row?.used_mj === undefined ? 0 : Number(row.used_mj);
    return allowanceOf(month, allowanceMj, usedMj);
  }

  async reserveJoules(input: ReserveInput): Promise<ReserveResult> {
    const at = input.at ?? new Date();
    const month = monthOf(at);
    const askedMj = toMillijoules(input.joules, 'joules');
    const ttlMs = input.ttlMs ?? DEFAULT_RESERVATION_TTL_MS;
    requireTtl(ttlMs, 'ttlMs');
    const id = newId('jr_');
    const grant = (allowanceMj: number, usedMj: number, heldMj: number) => {
      const freeMj = Math.max(0, allowanceMj - usedMj - heldMj);
      const allowance = { ...allowanceOf(month, allowanceMj, usedMj), remainingJoules: toJoules(freeMj) };
      return { grantedMj: Math.min(askedMj, freeMj), allowance };
    };
    const held = this.#held;
    if (held !== undefined) {
      held.expire(at.getTime());
      // The month's use as read with the key, when nothing was released since: a charge stored after
      // that read is still held, so it is counted. Otherwise read it, and hold in the same
      // synchronous step where the read is synchronous (the hot path). Where the read had to wait, a
      // charge may have been stored and its reservation released meanwhile: a read that saw a
      // release is taken again, so no Joule is counted by neither.
      const seen = input.seen === undefined ? undefined : this.#allowanceReads.get(input.seen);
      for (;;) {
        const releases = held.releases;
        let figures: { allowanceMj: number; usedMj: number };
        if (seen !== undefined && seen.releases === releases && seen.accountId === input.accountId && input.seen!.month === month) {
          figures = seen;
        } else {
          const row = (await this.#rows(this.#allowanceQuery.bind([month, input.accountId])))[0];
          if (held.releases !== releases) continue;
          figures = { allowanceMj: row === undefined ? 0 : Number(row.monthly_allowance_mj), usedMj: row?.used_mj == null ? 0 : Number(row.used_mj) };
        }
        const { grantedMj, allowance } = grant(figures.allowanceMj, figures.usedMj, held.held(input.accountId, month));
        if (grantedMj <= 0) return { reservation: undefined, allowance };
        held.hold(id, input.accountId, month, grantedMj, at.getTime() + ttlMs);
        return { reservation: { id, accountId: input.accountId, month, joules: toJoules(grantedMj) }, allowance };
      }
    }
    this.#sweepReservations(at.getTime());
    // PostgreSQL: one call (hosted-migrations.ts, svc_reserve_joules) locks the account's row,
    // grants from what its allowance has free after use and other unexpired reservations, and
    // records the reservation; grants of one account are serialized across replicas by that lock.
    const { rows } = await sql<{ allowance_mj: string; used_mj: string; held_mj: string; granted_mj: string }>`select * from svc_reserve_joules(${input.accountId}, ${month}, ${askedMj}, ${id}, ${at.getTime()}, ${at.getTime() + ttlMs})`.execute(this.#db);
    const row = rows[0];
    const { allowance } = grant(Number(row?.allowance_mj ?? 0), Number(row?.used_mj ?? 0), Number(row?.held_mj ?? 0));
    const grantedMj = Number(row?.granted_mj ?? 0);
    if (grantedMj <= 0) return { reservation: undefined, allowance };
    return { reservation: { id, accountId: input.accountId, month, joules: toJoules(grantedMj) }, allowance };
  }

  async releaseReservation(reservation: JouleReservation): Promise<void> {
    if (this.#held !== undefined) {
      this.#held.release(reservation.id);
      return;
    }
    await sql`select svc_release_joules(${reservation.id})`.execute(this.#db);
  }

  /** Deletes lapsed reservations (their replica never settled them) now and then: they stopped counting when they lapsed. */
  #sweepReservations(now: number): void {
    if (now - this.#lastReservationSweep < RESERVATION_SWEEP_MS) return;
    this.#lastReservationSweep = now;
    void this.#db.deleteFrom('joule_reservations').where('expires_at', '<=', now).execute().catch(() => {});
  }

  async recordCharge(input: ChargeInput): Promise<ChargeResult> {
    const { reservation } = input;
    if (reservation === undefined) return this.#recordCharge(input);
    // Stored (its Joules count in the month's use now) or not stored (nothing to hold for): given back
    // either way. The embedded store's is in memory; PostgreSQL's goes with the row (its insert
    // trigger), and only a row not stored leaves it to release here.
    const held = this.#held;
    let released = held !== undefined;
    try {
      const result = await this.#recordCharge(input);
      released ||= result.status === 'recorded';
      return result;
    } finally {
      if (held !== undefined) held.release(reservation.id);
      else if (!released) await this.releaseReservation(reservation).catch(() => {});
    }
  }

  async #recordCharge(input: ChargeInput): Promise<ChargeResult> {
    const row = this.#ledgerRow(input);
    // One statement: the ledger row, and (its AFTER INSERT trigger, migration 0002) the month's
    // counter, atomically. ON CONFLICT DO NOTHING rather than catching a unique violation: a
    // concurrent twin with the same Idempotency-Key waits for the first and inserts nothing
    // (nor does its trigger run), and the first one's row is what the caller gets back.
    const insert = this.#insertLedgerQuery.bind(LEDGER_COLUMNS.map((column) => row[column]));
    if (await this.#insertLedgerRow(insert, row.evidence_id, input.alone === true)) return { status: 'recorded', entry: toLedgerEntry(row) };
    const existing = await this.#db
      .selectFrom('ledger')
      .selectAll()
      .where('account_id', '=', row.account_id)
      .where('idempotency_key', '=', row.idempotency_key)
      .executeTakeFirstOrThrow();
    return { status: 'duplicate', entry: toLedgerEntry(existing) };
  }

  /** True when the row was stored, false when its Idempotency-Key was taken (nothing stored). */
  async #insertLedgerRow(insert: CompiledQuery<{ evidence_id: string }>, evidenceId: string, alone: boolean): Promise<boolean> {
    const rows = await this.#write('insert', insert, {
      alone,
      // The thread may have died with this row committed: it is stored then, once.
      alreadyStored: async () => (await this.#db.selectFrom('ledger').select('evidence_id').where('evidence_id', '=', evidenceId).executeTakeFirst()) !== undefined,
    });
    return rows > 0;
  }

  #ledgerRow(input: ChargeInput): LedgerRow {
    if (input.route.evidence_id !== input.evidenceId) throw new TypeError('evidenceId and route.evidence_id differ');
    if (typeof input.evidenceId !== 'string' || input.evidenceId === '') throw new TypeError('evidenceId is required');
    const at = input.at ?? new Date();
    const createdAt = at.getTime();
    if (!Number.isFinite(createdAt)) throw new RangeError('at is not a valid date');
    const { route } = input;
    if (!Number.isFinite(route.latency_ms) || route.latency_ms < 0) throw new RangeError('latency_ms must be a non-negative number');
    return {
      evidence_id: input.evidenceId,
      account_id: input.accountId,
      key_id: input.keyId,
      project_id: input.projectId,
      idempotency_key: input.idempotencyKey,
      created_at: createdAt,
      month: monthOf(at),
      day: dayOf(at),
      execution_plane: route.execution_plane,
      policy: route.policy,
      privacy_tier: route.privacy_tier,
      model: route.model,
      provider: route.provider,
      latency_ms: route.latency_ms,
      raw_mj: route.raw_joules === null ? null : toMillijoules(route.raw_joules, 'raw_joules'),
      estimated_mj: toMillijoules(route.estimated_joules, 'estimated_joules'),
      billable_mj: toMillijoules(route.billable_joules, 'billable_joules'),
      fallback: route.fallback ? 1 : 0,
      fallback_reason: route.fallback_reason,
      outcome: input.outcome,
      prompt_tokens: nonNegativeInteger(input.promptTokens, 'promptTokens'),
      completion_tokens: nonNegativeInteger(input.completionTokens, 'completionTokens'),
      response: input.response === undefined || input.response === null ? null : JSON.stringify(input.response),
      signature_alg: route.signature_alg ?? null,
      signing_key_id: route.signing_key_id ?? null,
      signature: route.signature ?? null,
      route_key_id: route.key_id ?? null,
      // PostgreSQL's insert trigger releases it with the row; the embedded store releases its own.
      reservation_id: this.#held === undefined ? (input.reservation?.id ?? null) : null,
    };
  }

  async findEvidence(accountId: string, evidenceId: string): Promise<LedgerEntry | undefined> {
    const row = await this.#db.selectFrom('ledger').selectAll().where('evidence_id', '=', evidenceId).where('account_id', '=', accountId).executeTakeFirst();
    return row === undefined ? undefined : toLedgerEntry(row);
  }

  async findByIdempotencyKey(accountId: string, idempotencyKey: string): Promise<LedgerEntry | undefined> {
    const row = await this.#db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
    return row === undefined ? undefined : toLedgerEntry(row);
  }

  async releaseIdempotencyKeys(before: Date): Promise<number> {
    const cutoff = before.getTime();
    if (!Number.isFinite(cutoff)) throw new RangeError('before is not a valid date');
    const result = await this.#db
      .updateTable('ledger')
      .set({ idempotency_key: null, response: null })
      .where('idempotency_key', 'is not', null)
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    const month = query.month ?? monthOf(new Date());
    if (!isMonth(month)) throw new RangeError('month must be YYYY-MM');
    const limit = Math.min(MAX_EVIDENCE_LIMIT, Math.max(0, Math.trunc(query.evidenceLimit ?? DEFAULT_EVIDENCE_LIMIT)));
    const { accountId, keyId } = query;
    const inMonth = this.#db.selectFrom('ledger').where('account_id', '=', accountId).where('month', '=', month);
    const sumMj = sql<number>`coalesce(sum(billable_mj), 0)`;
    const count = sql<number>`count(*)`;

    const recentLimit = Math.min(MAX_EVIDENCE_LIMIT, Math.max(0, Math.trunc(query.recentLimit ?? 0)));
    const newestFirst = <Q extends { orderBy: (column: 'created_at' | 'evidence_id', direction: 'desc') => Q }>(q: Q): Q => q.orderBy('created_at', 'desc').orderBy('evidence_id', 'desc');

    const [allowance, daily, keyTotals, keyEvidence, perKey, recent, projectTotals, projectEvidence] = await Promise.all([
      this.#allowanceFor(accountId, month),
      inMonth.select(['day', sumMj.as('mj'), count.as('requests')]).groupBy('day').orderBy('day').execute(),
      keyId === undefined ? undefined : inMonth.select([sumMj.as('mj'), count.as('requests')]).where('key_id', '=', keyId).executeTakeFirst(),
      keyId === undefined ? [] : newestFirst(inMonth.select(['evidence_id', 'billable_mj', 'created_at']).where('key_id', '=', keyId)).limit(limit).execute(),
      // Only a session's report lists every key: a key's report would throw the grouping away.
      query.perKey !== true ? [] : inMonth.select(['key_id', sumMj.as('mj'), count.as('requests')])
        .groupBy('key_id').orderBy(sumMj, 'desc').orderBy('key_id').limit(MAX_USAGE_PROJECTS + 1).execute(),
      // The columns the report shows, nothing else: not the stored `response` (an idempotent
      // replay's body, large and never parsed here, so a bad one cannot fail the report).
      recentLimit === 0 ? [] : newestFirst(inMonth.select([
        'evidence_id', 'created_at', 'key_id', 'project_id', 'billable_mj',
        'policy', 'execution_plane', 'privacy_tier', 'model', 'provider', 'latency_ms', 'fallback', 'fallback_reason',
      ])).limit(recentLimit).execute(),
      inMonth.select(['project_id', sumMj.as('mj'), count.as('requests')]).where('project_id', 'is not', null)
        .groupBy('project_id').orderBy(sumMj, 'desc').orderBy('project_id').limit(MAX_USAGE_PROJECTS + 1).execute(),
      // The newest `limit` rows of every project in one query (window functions: SQLite >= 3.25, PostgreSQL).
      this.#db
        .selectFrom((eb) => eb
          .selectFrom('ledger')
          .select((inner) => [
            'project_id', 'evidence_id', 'billable_mj', 'created_at',
            inner.fn.agg<number>('row_number').over((ob) => ob.partitionBy('project_id').orderBy('created_at', 'desc').orderBy('evidence_id', 'desc')).as('rank'),
          ])
          .where('account_id', '=', accountId)
          .where('month', '=', month)
          .where('project_id', 'is not', null)
          .as('ranked'))
        .selectAll()
        .where('rank', '<=', limit)
        .orderBy('project_id').orderBy('rank')
        .execute(),
    ]);

    const evidenceByProject = new Map<string, { evidenceId: string; joules: number; createdAt: Date }[]>();
    for (const row of projectEvidence) {
      if (row.project_id === null) continue;
      let list = evidenceByProject.get(row.project_id);
      if (list === undefined) evidenceByProject.set(row.project_id, (list = []));
      list.push({ evidenceId: row.evidence_id, joules: toJoules(Number(row.billable_mj)), createdAt: new Date(Number(row.created_at)) });
    }

    return {
      month,
      allowance,
      daily: daily.map((d) => ({ date: d.day, joules: toJoules(Number(d.mj)), requests: Number(d.requests) })),
      key: keyId === undefined ? undefined : {
        keyId,
        requests: Number(keyTotals?.requests ?? 0),
        joules: toJoules(Number(keyTotals?.mj ?? 0)),
        evidence: keyEvidence.map((e) => ({ evidenceId: e.evidence_id, joules: toJoules(Number(e.billable_mj)), createdAt: new Date(Number(e.created_at)) })),
      },
      keysTruncated: perKey.length > MAX_USAGE_PROJECTS,
      keys: perKey.slice(0, MAX_USAGE_PROJECTS).map((k) => ({ keyId: k.key_id, requests: Number(k.requests), joules: toJoules(Number(k.mj)) })),
      recent: recent.map((row) => ({
        evidenceId: row.evidence_id,
        createdAt: new Date(Number(row.created_at)),
        keyId: row.key_id,
        projectId: row.project_id,
        joules: toJoules(Number(row.billable_mj)),
        route: {
          policy: row.policy, execution_plane: row.execution_plane, privacy_tier: row.privacy_tier, model: row.model, provider: row.provider,
          latency_ms: Number(row.latency_ms), fallback: Number(row.fallback) === 1, fallback_reason: row.fallback_reason,
        },
      })),
      projectsTruncated: projectTotals.length > MAX_USAGE_PROJECTS,
      projects: projectTotals.slice(0, MAX_USAGE_PROJECTS).flatMap((p) => p.project_id === null ? [] : [{
        projectId: p.project_id,
        requests: Number(p.requests),
        joules: toJoules(Number(p.mj)),
        evidence: evidenceByProject.get(p.project_id) ?? [],
      }]),
    };
  }

  async ledgerTotal(accountId: string, month: string): Promise<{ joules: number; rows: number }> {
    if (!isMonth(month)) throw new RangeError('month must be YYYY-MM');
    const row = await this.#db
      .selectFrom('ledger')
      .select([sql<number>`coalesce(sum(billable_mj), 0)`.as('mj'), sql<number>`count(*)`.as('rows')])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .executeTakeFirstOrThrow();
    return { joules: toJoules(Number(row.mj)), rows: Number(row.rows) };
  }

  // Account lifecycle: the key cap, disabling accounts, ending their sessions (migration 0004).

  async issueKeyWithinCap(accountId: string, input: { scope: KeyScope; name?: string | null | undefined; project?: string | null | undefined }): Promise<IssuedKey> {
    const { row, secret } = newKeyRow(accountId, input);
    if (this.kind === 'postgres') {
      await this.#db.transaction().execute(async (trx) => {
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
      const cap = await this.#capOf(this.#db.selectFrom('accounts').selectAll().where('id', '=', accountId), accountId);
      const result = await this.#db
        .insertInto('api_keys')
        .columns(KEY_COLUMNS)
        .expression(this.#db
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

  async disableAccount(accountId: string): Promise<Account | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.updateTable('accounts').set({ disabled_at: Date.now() }).where('id', '=', accountId).where('disabled_at', 'is', null).execute();
      const row = await trx.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
      if (row === undefined) return undefined;
      await trx.deleteFrom('sessions').where('account_id', '=', accountId).execute();
      await trx.deleteFrom('sign_in_tokens').where('account_id', '=', accountId).where('used_at', 'is', null).execute();
      return toAccount(row);
    });
  }

  async enableAccount(accountId: string): Promise<Account | undefined> {
    const row = await this.#db.updateTable('accounts').set({ disabled_at: null }).where('id', '=', accountId).returningAll().executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async revokeSessions(accountId: string): Promise<{ sessions: number; signInLinks: number }> {
    return this.#db.transaction().execute(async (trx) => {
      const sessions = await trx.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst();
      const links = await trx.deleteFrom('sign_in_tokens').where('account_id', '=', accountId).where('used_at', 'is', null).executeTakeFirst();
      return { sessions: Number(sessions.numDeletedRows), signInLinks: Number(links.numDeletedRows) };
    });
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.#db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#ledgerWriter?.stop();
    await this.#db.destroy();
    await this.#onClose?.();
  }
}
