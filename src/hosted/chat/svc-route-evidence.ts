import type { SvcRoute } from '../../accounts/svc-route.ts';
import { newTimeOrderedId } from '../../shared/new-id.ts';
import type { SvcRouteWithoutEvidence } from '../routing/route-executor.ts';

/** What an evidence id looks like: those svcRouteEvidence mints; GET /evidence/:id refuses any other unread. */
export const EVIDENCE_ID = /^ev_[A-Za-z0-9]{1,64}$/;

/**
 * A run's `svc_route` as the answer carries it and its ledger row stores it (the charge writes
 * both at once): a new evidence id, time-ordered so the ledger's rows sort by creation; the key
 * that ran it, as evidence names who it bills; signed over all of that by `sign` (the server's
 * ML-DSA transport identity), when there is one.
 */
export function svcRouteEvidence(route: SvcRouteWithoutEvidence, keyId: string, sign: ((route: SvcRoute) => SvcRoute) | undefined): SvcRoute {
  const unsigned: SvcRoute = { ...route, key_id: keyId, evidence_id: newTimeOrderedId('ev_') };
  return sign?.(unsigned) ?? unsigned;
}
