/**
 * What the hosted tier keeps, as one interface over two stores: embedded SQLite in the data
 * dir for one machine, PostgreSQL for many replicas (store/open-hosted-store.ts picks one).
 * No HTTP here: routes, the admin CLI and tests all use this interface.
 *
 * Energy is in Joules (numbers, at most millijoule precision) at this interface; stores keep
 * integer millijoules so sums are exact and the usage report equals the ledger to the Joule.
 */

/** `developer_runtime`: free identity key; `supercomputer`: needs a paid hosted entitlement. */
export type KeyScope = 'developer_runtime' | 'supercomputer';

export interface Plan {
  /** Joules of hosted compute per calendar month (UTC). */
  monthlyJouleAllowance: number;
  /** Paid hosted-compute entitlement: `supercomputer` keys and hosted chat need it. */
  hostedEntitlement: boolean;
  /** Enterprise plan: enterprise policies, the `/v1` fleet prefix, the hardware substrate. */
  enterprise: boolean;
  /**
   * Most unrevoked keys the account may hold when it issues its own (`POST /api/keys`); absent
   * or null: the plan's default (`defaultMaxActiveKeys`). Read it through `maxActiveKeysOf`.
   */
  maxActiveKeys?: number | null | undefined;
}

/** Most keys a plan's cap may name: an integer column on both engines, and far past any real plan. */
export const MAX_ACTIVE_KEYS_LIMIT = 1_000_000;

/** Active-key caps when a plan names none: free accounts 10, paid 100, enterprise 1000. */
export const DEFAULT_MAX_ACTIVE_KEYS = { free: 10, entitled: 100, enterprise: 1000 } as const;

export function defaultMaxActiveKeys(plan: Pick<Plan, 'hostedEntitlement' | 'enterprise'>): number {
  if (plan.enterprise) return DEFAULT_MAX_ACTIVE_KEYS.enterprise;
  return plan.hostedEntitlement ? DEFAULT_MAX_ACTIVE_KEYS.entitled : DEFAULT_MAX_ACTIVE_KEYS.free;
}

/** The cap on unrevoked keys that holds for this plan: its own, or its default. */
export function maxActiveKeysOf(plan: Plan): number {
  return plan.maxActiveKeys ?? defaultMaxActiveKeys(plan);
}

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  createdAt: Date;
  /** Set by `svc admin accounts disable`: its keys, sessions and sign-in links are refused until enabled. */
  disabledAt: Date | null;
}

/** Key metadata: everything but the secret, which is shown once at issue and kept only as a hash. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  scope: KeyScope;
  name: string | null;
  project: string | null;
  /** The secret's recognizable start (e.g. `svc_sk_AbC1`), for people to tell keys apart. */
  prefix: string;
  lastFour: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface IssuedKey {
  key: ApiKeyRecord;
  /** The whole secret: returned once, never stored. */
  secret: string;
}

/** A key's metadata with its secret's SHA-256 (hex): what an exported developer-key file carries. */
export interface KeyHash {
  key: ApiKeyRecord;
  secretSha256: string;
}

export type KeyCheck =
  /** `allowance`: the account's current month, read in the same query (so a hosted request needs no second read). */
  | { status: 'valid'; key: ApiKeyRecord; account: Account; allowance: Allowance }
  | { status: 'revoked'; key: ApiKeyRecord }
  /** The key is live but its account is disabled (`svc admin accounts disable`). */
  | { status: 'account_disabled'; key: ApiKeyRecord; account: Account }
  | { status: 'unknown' };

export interface Session {
  id: string;
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Route evidence as the contract names it (`svc_route`), one per hosted chat response.
 * Units: `latency_ms` milliseconds; every `*_joules` in Joules; `raw_joules` is null unless measured.
 */
export interface SvcRoute {
  execution_plane: string;
  policy: string;
  privacy_tier: string;
  model: string;
  provider: string;
  latency_ms: number;
  raw_joules: number | null;
  estimated_joules: number;
  billable_joules: number;
  fallback: boolean;
  fallback_reason: string | null;
  /** The API key the request was made with (its id, never the secret); absent on evidence recorded before svc signed it. */
  key_id?: string;
  evidence_id: string;
  /** With an ML-DSA transport identity (--pqc-transport …,ml-dsa-65): its algorithm, key id and the signature over the rest (src/transport/evidence-signature.ts). */
  signature_alg?: string;
  signing_key_id?: string;
  signature?: string;
}

/** One ledger row: a billable request and its evidence, written atomically with the usage counter. */
export interface LedgerEntry {
  evidenceId: string;
  accountId: string;
  keyId: string;
  projectId: string | null;
  idempotencyKey: string | null;
  createdAt: Date;
  route: SvcRoute;
  /** Token counts of the request, as the backend reported them. */
  promptTokens: number;
  completionTokens: number;
  /** How the request ended: `completed`, `stopped_at_joule_ceiling`, `failed` (failed ones bill what ran). */
  outcome: string;
  /** The stored response for idempotent replays (non-streamed JSON, or the assembled stream), if kept. */
  response: unknown;
}

export type ChargeInput = Omit<LedgerEntry, 'createdAt'> & {
  at?: Date;
  /**
   * No other hosted chat request is in flight in this process. The embedded store then writes the row
   * on its own connection at once, when its writer thread is idle: handing one row to the
   * thread and waking it costs more than the write (ledger-writer.ts); under load rows go to the
   * thread and commit in groups. Other stores ignore it.
   */
  alone?: boolean;
  /** The Joules held for this request (reserveJoules): given back once the row is stored, or when the charge fails. */
  reservation?: JouleReservation | undefined;
};

/**
 * Joules of an account's allowance held for one running request (`reserveJoules`), so that
 * requests running at the same time, on any replica, cannot each spend what is left.
 */
export interface JouleReservation {
  id: string;
  accountId: string;
  /** `YYYY-MM`, UTC: the month whose allowance holds it. */
  month: string;
  /** What was granted: never more than asked, never more than was free. */
  joules: number;
}

export interface ReserveInput {
  accountId: string;
  /** The most this request may cost (its ceiling). */
  joules: number;
  /** A reservation never settled (its replica died) stops counting after this long; default 1 hour. */
  ttlMs?: number | undefined;
  at?: Date | undefined;
  /**
   * The allowance this store's `checkKey` read for the request, moments ago: the embedded store
   * uses it instead of reading again when nothing was released since (any charge stored after
   * it is then still held). Other stores, and a stale one, read afresh.
   */
  seen?: Allowance | undefined;
}

export interface ReserveResult {
  /** Undefined when nothing of the allowance is free. */
  reservation: JouleReservation | undefined;
  /** The month's allowance before this grant; `remainingJoules` is what was free (used and held subtracted). */
  allowance: Allowance;
}

export type ChargeResult =
  /** Written now: the ledger row and the account's monthly counter moved together. */
  | { status: 'recorded'; entry: LedgerEntry }
  /** The same `Idempotency-Key` was already billed for this account: nothing was written. */
  | { status: 'duplicate'; entry: LedgerEntry };

export interface Allowance {
  /** `YYYY-MM`, UTC. */
  month: string;
  allowanceJoules: number;
  usedJoules: number;
  /** Never below 0. */
  remainingJoules: number;
}

export interface UsageQuery {
  accountId: string;
  /** The key the report is asked with: its own request counts and evidence (none: a signed-in session's report, `key` left out). */
  keyId?: string | undefined;
  /** `YYYY-MM`, UTC; default the current month. */
  month?: string | undefined;
  /** Most evidence rows to list per key and per project (newest first). */
  evidenceLimit?: number | undefined;
  /** Most ledger entries of the whole account to return in `recent`, newest first (default 0). */
  recentLimit?: number | undefined;
  /** Also total every key of the account (`keys`, a signed-in session's report); default false, `keys` left empty. */
  perKey?: boolean | undefined;
}

/**
 * One of the account's newest ledger rows as a usage report lists it: the evidence id and its
 * Joules (what the contract's usage report carries) and the route's facts that are not billing
 * figures. No tokens, outcome, estimated or measured Joules, or signatures: the contract keeps
 * route-evidence-linked billing events out of usage (`GET /evidence/:id` is where they are).
 */
export interface RecentEvidence {
  evidenceId: string;
  createdAt: Date;
  keyId: string;
  projectId: string | null;
  /** The row's billable Joules, as in the key's and the projects' evidence lists. */
  joules: number;
  route: Pick<SvcRoute, 'policy' | 'execution_plane' | 'privacy_tier' | 'model' | 'provider' | 'latency_ms' | 'fallback' | 'fallback_reason'>;
}

/** Most projects a usage report lists (the heaviest first). */
export const MAX_USAGE_PROJECTS = 100;

export interface UsageReport {
  month: string;
  allowance: Allowance;
  /** One entry per UTC day of the month that has usage, in order. */
  daily: { date: string; joules: number; requests: number }[];
  /** Absent when the query named no key. */
  key?: { keyId: string; requests: number; joules: number; evidence: { evidenceId: string; joules: number; createdAt: Date }[] } | undefined;
  /** With `perKey`: every key of the account with usage this month, the most Joules first, at most MAX_USAGE_PROJECTS of them; else empty. */
  keys: { keyId: string; requests: number; joules: number }[];
  /** More keys had usage than `keys` lists. */
  keysTruncated: boolean;
  /** The account's newest ledger entries this month (`recentLimit` of them). */
  recent: RecentEvidence[];
  /** The projects with the most Joules this month, at most MAX_USAGE_PROJECTS of them (project ids come from a request header, so they are unbounded). */
  projects: { projectId: string; requests: number; joules: number; evidence: { evidenceId: string; joules: number; createdAt: Date }[] }[];
  /** More projects had usage than `projects` lists. */
  projectsTruncated: boolean;
}

export interface HostedStore {
  /** `sqlite` (embedded, one machine) or `postgres` (shared by replicas). */
  readonly kind: 'sqlite' | 'postgres';

  createAccount(input: { name: string; plan: Plan }): Promise<Account>;
  getAccount(accountId: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  /** Undefined when there is no such account. */
  setPlan(accountId: string, plan: Partial<Plan>): Promise<Account | undefined>;

  /** Entitlement is the caller's check (it owns the error); the store issues what it is asked. */
  issueKey(accountId: string, input: { scope: KeyScope; name?: string | null | undefined; project?: string | null | undefined }): Promise<IssuedKey>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Undefined when the key is not this account's (or does not exist): no account touches another's keys. */
  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Every key (revoked ones too) with its secret's hash, of one account or of all: for the
   * developer-key export only (hashes of 256-bit secrets, never the secrets). Oldest first.
   */
  listKeyHashes(accountId?: string): Promise<KeyHash[]>;
  /** Hashes the presented secret and compares in constant time; records last use (coarsely). */
  checkKey(secret: string): Promise<KeyCheck>;

  /** A one-time sign-in token for an account (the admin CLI prints it as a link). */
  createSignInToken(accountId: string, ttlMs: number): Promise<{ token: string; expiresAt: Date }>;
  /** Redeems a sign-in token once: a new session and its secret token, or undefined. */
  redeemSignInToken(token: string, sessionTtlMs: number): Promise<{ session: Session; token: string } | undefined>;
  checkSession(token: string): Promise<{ session: Session; account: Account } | undefined>;
  endSession(token: string): Promise<void>;

  allowance(accountId: string, at?: Date): Promise<Allowance>;
  /**
   * Holds up to `joules` of the account's allowance for one request, atomically with every other
   * reservation of the account (across replicas on PostgreSQL): the grant is the smaller of what
   * is asked and what is free after the month's usage and the other requests' reservations.
   */
  reserveJoules(input: ReserveInput): Promise<ReserveResult>;
  /** Gives a reservation back (its request failed before anything was billed). Idempotent. */
  releaseReservation(reservation: JouleReservation): Promise<void>;
  /**
   * Atomic: the ledger row with its evidence and the monthly counter, or nothing; idempotent per
   * account and key. The input's reservation is given back once the row is stored (the row's
   * Joules then count instead), or if storing fails.
   */
  recordCharge(input: ChargeInput): Promise<ChargeResult>;
  findEvidence(accountId: string, evidenceId: string): Promise<LedgerEntry | undefined>;
  findByIdempotencyKey(accountId: string, idempotencyKey: string): Promise<LedgerEntry | undefined>;
  /**
   * Forgets the Idempotency-Keys (and the answers kept for their replays) of ledger rows created
   * before `before`: the rows, their evidence and Joules stay; the keys may be used again.
   * Returns how many rows were released.
   */
  releaseIdempotencyKeys(before: Date): Promise<number>;
  usage(query: UsageQuery): Promise<UsageReport>;
  /** Sum of every ledger row of an account in a month, from the rows themselves (audits and tests). */
  ledgerTotal(accountId: string, month: string): Promise<{ joules: number; rows: number }>;

  // Account lifecycle (svc admin accounts disable|enable, svc admin sessions revoke, the key cap).
  /**
   * Like issueKey, for self-service issuing: refuses with KeyLimitReachedError when the account
   * already holds its plan's `maxActiveKeys` unrevoked keys. The count and the insert are one
   * atomic step, so concurrent calls (on any replica) never pass the cap together.
   */
  issueKeyWithinCap(accountId: string, input: { scope: KeyScope; name?: string | null | undefined; project?: string | null | undefined }): Promise<IssuedKey>;
  /**
   * Disables an account: its keys are refused from the next request, and its sessions and unused
   * sign-in links are deleted, in one transaction. Disabling twice keeps the first time.
   * Undefined when there is no such account.
   */
  disableAccount(accountId: string): Promise<Account | undefined>;
  /** Lifts a disable: keys work again; ended sessions stay ended. Undefined when there is no such account. */
  enableAccount(accountId: string): Promise<Account | undefined>;
  /** Ends every session of the account and voids its unused sign-in links; how many of each. */
  revokeSessions(accountId: string): Promise<{ sessions: number; signInLinks: number }>;

  /** Whether the store answers now (usage reports say "unavailable" instead of zeros). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
