import type { FastifyRequest } from 'fastify';
import type { JouleReservation, LedgerEntry, LedgerStore } from '../../accounts/ledger-store.ts';
import type { SvcRoute } from '../../accounts/svc-route.ts';
import type { RouteResult } from '../routing/route-executor.ts';
import { ledgerUnavailable } from './chat-errors.ts';
import type { StoredChatResponse } from './idempotency.ts';

export interface ChatCharge {
  request: FastifyRequest;
  result: RouteResult;
  /** The signed evidence, stored as the row's route. */
  route: SvcRoute;
  projectId: string | undefined;
  idempotencyKey: string | undefined;
  /** The whole answer, kept for a replay when the key binds. */
  completion: Record<string, unknown>;
  hash: string;
  stream: boolean;
  /** No other chat request is in flight here (ChargeInput's `alone`). */
  alone: boolean;
  /** Given back by the store once the row is stored (or storing failed). */
  reservation: JouleReservation;
}

/** The stored row, and whether another request with the same Idempotency-Key was billed first. */
export interface Charged {
  entry: LedgerEntry;
  duplicate: boolean;
}

/**
 * One ledger row per run that did work. Only a run that finished (completed, or stopped at the
 * Joule ceiling) binds its Idempotency-Key: a failed or abandoned run is billed for what ran
 * but leaves the key free, so the client's retry runs again.
 */
export async function chargeChat(store: Pick<LedgerStore, 'recordCharge'>, c: ChatCharge): Promise<Charged> {
  const identity = c.request.hostedIdentity!;
  const binds = c.result.outcome === 'completed' || c.result.outcome === 'stopped_at_joule_ceiling';
  // The answer is kept only where a retry may need it back (a run that binds its
  // Idempotency-Key): evidence is about routes and Joules, not what the model said.
  const idempotencyKey = binds ? (c.idempotencyKey ?? null) : null;
  const response: StoredChatResponse | null = idempotencyKey === null ? null : { request_hash: c.hash, stream: c.stream, completion: c.completion };
  try {
    const result = await store.recordCharge({
      evidenceId: c.route.evidence_id,
      accountId: identity.account.id,
      keyId: identity.key.id,
      projectId: c.projectId ?? null,
      idempotencyKey,
      route: c.route,
      promptTokens: c.result.usage.promptTokens,
      completionTokens: c.result.usage.completionTokens,
      outcome: c.result.outcome,
      response,
      alone: c.alone,
      reservation: c.reservation,
    });
    return { entry: result.entry, duplicate: result.status === 'duplicate' };
  } catch (error) {
    c.request.log.error({ err: error }, 'recording a hosted charge failed');
    throw ledgerUnavailable();
  }
}
