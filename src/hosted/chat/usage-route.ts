import type { HostedPlugin } from '../hosted-app.ts';
import { HostedError, hostedErrorBody } from '../hosted-error.ts';
import type { UsageReport } from '../hosted-store.ts';
import { requireHostedEntitlement } from '../require-key.ts';

/** What the usage report does not expose (the contract's list), said in every report. */
const NOT_EXPOSED = [
  'per-space attribution',
  'billing-grade per-key, per-project or per-route Joules when upstream route evidence is absent',
  'route-evidence-linked billing events',
  'reconciliation with a payment processor',
];

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const EVIDENCE_LIMIT = 100;

function evidenceOf(list: UsageReport['key']['evidence']): { evidence_id: string; joules: number; created_at: string }[] {
  return list.map((e) => ({ evidence_id: e.evidenceId, joules: e.joules, created_at: e.createdAt.toISOString() }));
}

/**
 * `GET /usage` (beta): any valid key, any scope. Every figure comes from the ledger in the
 * store; when the store does not answer, the report is a 503 that says `unavailable` and
 * carries no figures at all, never zeros that would read as "nothing used".
 */
export function usagePlugin(): HostedPlugin {
  return async (scope, context) => {
    scope.get<{ Querystring: { month?: string } }>('/usage', { preHandler: context.requireKey }, async (request, reply) => {
      const { account, key } = request.hostedIdentity!;
      requireHostedEntitlement(request.hostedIdentity!);
      const month = request.query.month;
      if (month !== undefined && (typeof month !== 'string' || !MONTH.test(month))) {
        throw new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message: 'month must be YYYY-MM (UTC).', param: 'month' });
      }
      let report: UsageReport;
      try {
        report = await context.store.usage({ accountId: account.id, keyId: key.id, month, evidenceLimit: EVIDENCE_LIMIT });
      } catch (error) {
        request.log.error({ err: error }, 'usage report: the ledger store did not answer');
        const unavailable = new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'Usage accounting is unavailable: the ledger store did not answer. No figures are reported.', retryAfterSeconds: 5 });
        reply.header('retry-after', '5').header('cache-control', 'no-store');
        return reply.code(503).send({ ...hostedErrorBody(unavailable), accounting_source: 'unavailable' });
      }
      reply.header('cache-control', 'no-store');
      const projectIds = report.projects.map((p) => p.projectId);
      return {
        object: 'usage_report',
        beta: true,
        month: report.month,
        accounting_source: 'ledger',
        joules_used: report.allowance.usedJoules,
        joules_remaining: report.allowance.remainingJoules,
        joules_allowance: report.allowance.allowanceJoules,
        daily: report.daily.map((d) => ({ date: d.date, joules: d.joules, requests: d.requests })),
        key: { key_id: report.key.keyId, requests: report.key.requests, joules: report.key.joules, evidence: evidenceOf(report.key.evidence) },
        projects: report.projects.map((p) => ({ project_id: p.projectId, requests: p.requests, joules: p.joules, evidence: evidenceOf(p.evidence) })),
        projects_truncated: report.projectsTruncated,
        source_descriptor: {
          scope: { account_id: account.id, key_id: key.id, project_ids: projectIds },
          ledger_keys: [
            `ledger:account_id=${account.id}:month=${report.month}`,
            `ledger:account_id=${account.id}:key_id=${key.id}:month=${report.month}`,
            ...projectIds.map((p) => `ledger:account_id=${account.id}:project_id=${p}:month=${report.month}`),
          ],
          store: context.store.kind,
          evidence_limit: EVIDENCE_LIMIT,
        },
        not_exposed: NOT_EXPOSED,
      };
    });
  };
}
