import type { HostedPlugin } from '../hosted-plugin.ts';
import { HostedError, hostedErrorBody } from '../hosted-error.ts';
import type { SessionStore } from '../../accounts/session-store.ts';
import type { StoreConnection } from '../../accounts/store-connection.ts';
import type { UsageCounts, UsageReport, UsageStore } from '../../accounts/usage-store.ts';
import { requireHostedEntitlement } from '../require-key.ts';
import { acceptSessions } from '../sessions/accept-sessions.ts';

/** What the usage report does not expose (the contract's list), said in every report. */
const NOT_EXPOSED = [
  'per-space attribution',
  'billing-grade per-key, per-project or per-route Joules when upstream route evidence is absent',
  'route-evidence-linked billing events',
  'reconciliation with a payment processor',
];

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const EVIDENCE_LIMIT = 100;

function evidenceOf(list: UsageReport['projects'][number]['evidence']): { evidence_id: string; joules: number; created_at: string }[] {
  return list.map((e) => ({ evidence_id: e.evidenceId, joules: e.joules, created_at: e.createdAt.toISOString() }));
}

/** Requests and tokens as the report names them (additions beside the contract's Joules, in OpenAI's token words). */
function counts(c: UsageCounts): { requests: number; prompt_tokens: number; completion_tokens: number } {
  return { requests: c.requests, prompt_tokens: c.promptTokens, completion_tokens: c.completionTokens };
}

/** How many of the account's newest ledger entries a signed-in session's report carries. */
const RECENT_LIMIT = 20;

function noEntitlement(): HostedError {
  return new HostedError({ status: 402, type: 'insufficient_quota', code: 'insufficient_quota', message: 'This account has no active hosted compute entitlement.' });
}

/**
 * `GET /usage` (beta): a `supercomputer` key of an entitled account, or (under `/api/v1`) a
 * signed-in session of one, for the console's usage page. Every figure comes from the ledger in
 * the store; when the store does not answer, the report is a 503 that says `unavailable` and
 * carries no figures at all, never zeros that would read as "nothing used".
 *
 * A key's report is the contract's: the key's own counts and evidence, and the account's days
 * and projects. A session is the account owner, with no key of its own: `key` is null, and the
 * report adds `keys` (every key's requests and Joules) and `recent_evidence` (the account's
 * newest evidence ids with their Joules and the route's non-billing facts).
 */
export function usagePlugin(): HostedPlugin<UsageStore & SessionStore & Pick<StoreConnection, 'kind'>> {
  return async (scope, context) => {
    const admit = await acceptSessions(scope, context);
    scope.get<{ Querystring: { month?: string } }>('/usage', { preHandler: admit }, async (request, reply) => {
      const session = request.hostedSession;
      const identity = request.hostedIdentity;
      const account = session?.account ?? identity!.account;
      if (identity !== undefined) requireHostedEntitlement(identity);
      else if (!account.plan.hostedEntitlement) throw noEntitlement();
      const keyId = identity?.key.id;
      const month = request.query.month;
      if (month !== undefined && (typeof month !== 'string' || !MONTH.test(month))) {
        throw new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message: 'month must be YYYY-MM (UTC).', param: 'month' });
      }
      let report: UsageReport;
      try {
        report = await context.store.usage({ accountId: account.id, keyId, month, evidenceLimit: EVIDENCE_LIMIT, recentLimit: session === undefined ? 0 : RECENT_LIMIT, perKey: session !== undefined });
      } catch (error) {
        request.log.error({ err: error }, 'usage report: the ledger store did not answer');
        const unavailable = new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'Usage accounting is unavailable: the ledger store did not answer. No figures are reported.', retryAfterSeconds: 5 });
        reply.header('retry-after', '5').header('cache-control', 'no-store');
        return reply.code(503).send({ ...hostedErrorBody(unavailable), accounting_source: 'unavailable' });
      }
      reply.header('cache-control', 'no-store');
      const projectIds = report.projects.map((p) => p.projectId);
      const ledger = (scopeKey: string) => `ledger:account_id=${account.id}:${scopeKey}month=${report.month}`;
      const keyIds = session === undefined ? [keyId!] : report.keys.map((k) => k.keyId);
      return {
        object: 'usage_report',
        beta: true,
        month: report.month,
        accounting_source: 'ledger',
        joules_used: report.allowance.usedJoules,
        joules_remaining: report.allowance.remainingJoules,
        joules_allowance: report.allowance.allowanceJoules,
        daily: report.daily.map((d) => ({ date: d.date, joules: d.joules, ...counts(d) })),
        key: report.key === undefined ? null : { key_id: report.key.keyId, ...counts(report.key), joules: report.key.joules, evidence: evidenceOf(report.key.evidence) },
        ...(session === undefined ? {} : {
          keys: report.keys.map((k) => ({ key_id: k.keyId, ...counts(k), joules: k.joules })),
          keys_truncated: report.keysTruncated,
          // Evidence ids and their Joules, as the key's evidence lists, with the route's non-billing
          // facts: no per-request tokens, outcome, estimated or measured Joules, or signatures
          // (the contract keeps route-evidence-linked billing events out of usage; the page reads
          // them per row from GET /evidence/:id, which a session may call too).
          recent_evidence: report.recent.map((e) => ({
            evidence_id: e.evidenceId, created_at: e.createdAt.toISOString(), key_id: e.keyId, project_id: e.projectId,
            joules: e.joules, route: e.route,
          })),
        }),
        projects: report.projects.map((p) => ({ project_id: p.projectId, ...counts(p), joules: p.joules, evidence: evidenceOf(p.evidence) })),
        projects_truncated: report.projectsTruncated,
        source_descriptor: {
          scope: { account_id: account.id, key_id: keyId ?? null, ...(session === undefined ? {} : { key_ids: keyIds, via: 'session' }), project_ids: projectIds },
          ledger_keys: [
            ledger(''),
            ...keyIds.map((k) => ledger(`key_id=${k}:`)),
            ...projectIds.map((p) => ledger(`project_id=${p}:`)),
          ],
          store: context.store.kind,
          evidence_limit: EVIDENCE_LIMIT,
        },
        not_exposed: NOT_EXPOSED,
      };
    });
  };
}
