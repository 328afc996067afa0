/**
 * Row types of the hosted schema (hosted-migrations.ts creates it). Both stores return plain
 * numbers for every integer column: times are epoch milliseconds (UTC), energy is integer
 * millijoules, booleans are 0/1 (SQLite has no boolean type; one representation for both).
 */
export interface AccountRow {
  id: string;
  name: string;
  monthly_allowance_mj: number;
  hosted_entitlement: number;
  enterprise: number;
  created_at: number;
  /** Migration 0004: when `svc admin accounts disable` disabled it (epoch ms), or null. */
  disabled_at: number | null;
  /** Migration 0004: the plan's cap on unrevoked keys, or null for the plan's default. */
  max_active_keys: number | null;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  scope: string;
  name: string | null;
  project: string | null;
  prefix: string;
  last_four: string;
  secret_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface SignInTokenRow {
  token_hash: string;
  account_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SessionRow {
  id: string;
  token_hash: string;
  account_id: string;
  created_at: number;
  expires_at: number;
}

export interface LedgerRow {
  evidence_id: string;
  account_id: string;
  key_id: string;
  project_id: string | null;
  idempotency_key: string | null;
  created_at: number;
  /** `YYYY-MM` (UTC), so a month's rows are one index range. */
  month: string;
  /** `YYYY-MM-DD` (UTC), for the daily timeline. */
  day: string;
  execution_plane: string;
  policy: string;
  privacy_tier: string;
  model: string;
  provider: string;
  latency_ms: number;
  raw_mj: number | null;
  estimated_mj: number;
  billable_mj: number;
  fallback: number;
  fallback_reason: string | null;
  outcome: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** JSON text of the stored response (`null` when none was kept). */
  response: string | null;
  /** The route evidence's signature fields, null when it was not signed. */
  signature_alg: string | null;
  signing_key_id: string | null;
  signature: string | null;
  /** The key id as the route evidence carries it (and signs it); null on rows from before it did. */
  route_key_id: string | null;
  /** The Joule reservation this row settled (PostgreSQL: its insert trigger releases it); null on the embedded store. */
  reservation_id: string | null;
}

export interface UsageCounterRow {
  account_id: string;
  month: string;
  used_mj: number;
}

/** Joules held for a running request (PostgreSQL only: the embedded store holds them in memory). */
export interface JouleReservationRow {
  id: string;
  account_id: string;
  month: string;
  reserved_mj: number;
  expires_at: number;
}

export interface HostedDatabase {
  joule_reservations: JouleReservationRow;
  accounts: AccountRow;
  api_keys: ApiKeyRow;
  sign_in_tokens: SignInTokenRow;
  sessions: SessionRow;
  ledger: LedgerRow;
  usage_counters: UsageCounterRow;
}
