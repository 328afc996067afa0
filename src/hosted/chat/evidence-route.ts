import type { HostedPlugin } from '../hosted-plugin.ts';
import type { LedgerStore } from '../../accounts/ledger-store.ts';
import type { SessionStore } from '../../accounts/session-store.ts';
import { acceptSessions } from '../sessions/accept-sessions.ts';
import { HostedError } from '../hosted-error.ts';
import { ledgerUnavailable } from './chat-errors.ts';
import { EVIDENCE_ID } from './svc-route-evidence.ts';

/**
 * `GET /evidence/:id`: one ledger row's route evidence and request facts, for the account that
 * made the request only. Another account's id answers exactly like an unknown one (404), so
 * ids cannot be probed. The stored response (kept for idempotent replays) is not returned:
 * evidence is about the route and the Joules, not the content. Under `/api/v1` a signed-in
 * session of the account may read it too (the usage page's evidence rows: outcome, tokens,
 * estimated and measured Joules), as it may read usage (accept-sessions.ts).
 */
export function evidencePlugin(): HostedPlugin<Pick<LedgerStore, 'findEvidence'> & SessionStore> {
  return async (scope, context) => {
    const admit = await acceptSessions(scope, context);
    scope.get<{ Params: { id: string } }>('/evidence/:id', { preHandler: admit }, async (request) => {
      const { id } = request.params;
      const notFound = new HostedError({ status: 404, type: 'invalid_request_error', code: 'evidence_not_found', message: 'No route evidence with this id for this account.', param: 'id' });
      if (!EVIDENCE_ID.test(id)) throw notFound;
      const entry = await context.store.findEvidence((request.hostedSession?.account ?? request.hostedIdentity!.account).id, id).catch(() => {
        throw ledgerUnavailable();
      });
      if (entry === undefined) throw notFound;
      return {
        object: 'svc_route_evidence',
        evidence_id: entry.evidenceId,
        svc_route: entry.route,
        outcome: entry.outcome,
        created_at: entry.createdAt.toISOString(),
        key_id: entry.keyId,
        project_id: entry.projectId,
        prompt_tokens: entry.promptTokens,
        completion_tokens: entry.completionTokens,
        idempotent: entry.idempotencyKey !== null,
      };
    });
  };
}
