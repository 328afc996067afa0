import type { ChargeInput, LedgerEntry } from '../ledger-store.ts';
import type { LedgerRow } from './hosted-database.ts';
import { dayOf, monthOf, toJoules, toMillijoules } from './energy-units.ts';

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

export function toLedgerEntry(row: LedgerRow): LedgerEntry {
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

function nonNegativeInteger(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer`);
  return value;
}

/**
 * The ledger row of a charge, its input checked. `reservationWithRow`: the row carries its
 * reservation's id, for PostgreSQL's insert trigger to release with it (the embedded store
 * releases its own, in memory).
 */
export function ledgerRow(input: ChargeInput, reservationWithRow: boolean): LedgerRow {
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
    reservation_id: reservationWithRow ? (input.reservation?.id ?? null) : null,
  };
}
