import { sql } from 'kysely';
import { MAX_USAGE_PROJECTS, type UsageCounts, type UsageQuery, type UsageReport, type UsageStore } from '../usage-store.ts';
import { isMonth, monthOf, toJoules } from './energy-units.ts';
import type { StoreHandle } from './store-handle.ts';

const DEFAULT_EVIDENCE_LIMIT = 50;
const MAX_EVIDENCE_LIMIT = 1000;

/** A grouped row's request and token counts (drivers return sums as strings or bigints: Number them). */
function counts(row: { requests: unknown; prompt_tokens: unknown; completion_tokens: unknown }): UsageCounts {
  return { requests: Number(row.requests), promptTokens: Number(row.prompt_tokens), completionTokens: Number(row.completion_tokens) };
}

/** Usage reports and audit totals over Kysely: read from the ledger rows themselves, on SQLite and PostgreSQL alike. */
export class KyselyUsageStore implements UsageStore {
  readonly #handle: StoreHandle;

  constructor(handle: StoreHandle) {
    this.#handle = handle;
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    const month = query.month ?? monthOf(new Date());
    if (!isMonth(month)) throw new RangeError('month must be YYYY-MM');
    const limit = Math.min(MAX_EVIDENCE_LIMIT, Math.max(0, Math.trunc(query.evidenceLimit ?? DEFAULT_EVIDENCE_LIMIT)));
    const { accountId, keyId } = query;
    const inMonth = this.#handle.db.selectFrom('ledger').where('account_id', '=', accountId).where('month', '=', month);
    const sumMj = sql<number>`coalesce(sum(billable_mj), 0)`;
    const count = sql<number>`count(*)`;
    // Token totals beside Joules and requests: what an OpenAI-style usage view shows (aggregates, not per-row billing events).
    const promptSum = sql<number>`coalesce(sum(prompt_tokens), 0)`;
    const completionSum = sql<number>`coalesce(sum(completion_tokens), 0)`;
    const totals = [sumMj.as('mj'), count.as('requests'), promptSum.as('prompt_tokens'), completionSum.as('completion_tokens')] as const;

    const recentLimit = Math.min(MAX_EVIDENCE_LIMIT, Math.max(0, Math.trunc(query.recentLimit ?? 0)));
    const newestFirst = <Q extends { orderBy: (column: 'created_at' | 'evidence_id', direction: 'desc') => Q }>(q: Q): Q => q.orderBy('created_at', 'desc').orderBy('evidence_id', 'desc');

    const [allowance, daily, keyTotals, keyEvidence, perKey, recent, projectTotals, projectEvidence] = await Promise.all([
      this.#handle.allowanceFor(accountId, month),
      inMonth.select(['day', ...totals]).groupBy('day').orderBy('day').execute(),
      keyId === undefined ? undefined : inMonth.select([...totals]).where('key_id', '=', keyId).executeTakeFirst(),
      keyId === undefined ? [] : newestFirst(inMonth.select(['evidence_id', 'billable_mj', 'created_at']).where('key_id', '=', keyId)).limit(limit).execute(),
      // Only a session's report lists every key: a key's report would throw the grouping away.
      query.perKey !== true ? [] : inMonth.select(['key_id', ...totals])
        .groupBy('key_id').orderBy(sumMj, 'desc').orderBy('key_id').limit(MAX_USAGE_PROJECTS + 1).execute(),
      // The columns the report shows, nothing else: not the stored `response` (an idempotent
      // replay's body, large and never parsed here, so a bad one cannot fail the report).
      recentLimit === 0 ? [] : newestFirst(inMonth.select([
        'evidence_id', 'created_at', 'key_id', 'project_id', 'billable_mj',
        'policy', 'execution_plane', 'privacy_tier', 'model', 'provider', 'latency_ms', 'fallback', 'fallback_reason',
      ])).limit(recentLimit).execute(),
      inMonth.select(['project_id', ...totals]).where('project_id', 'is not', null)
        .groupBy('project_id').orderBy(sumMj, 'desc').orderBy('project_id').limit(MAX_USAGE_PROJECTS + 1).execute(),
      // The newest `limit` rows of every project in one query (window functions: SQLite >= 3.25, PostgreSQL).
      this.#handle.db
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
      daily: daily.map((d) => ({ date: d.day, joules: toJoules(Number(d.mj)), ...counts(d) })),
      key: keyId === undefined ? undefined : {
        keyId,
        joules: toJoules(Number(keyTotals?.mj ?? 0)),
        ...counts(keyTotals ?? { requests: 0, prompt_tokens: 0, completion_tokens: 0 }),
        evidence: keyEvidence.map((e) => ({ evidenceId: e.evidence_id, joules: toJoules(Number(e.billable_mj)), createdAt: new Date(Number(e.created_at)) })),
      },
      keysTruncated: perKey.length > MAX_USAGE_PROJECTS,
      keys: perKey.slice(0, MAX_USAGE_PROJECTS).map((k) => ({ keyId: k.key_id, joules: toJoules(Number(k.mj)), ...counts(k) })),
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
        joules: toJoules(Number(p.mj)),
        ...counts(p),
        evidence: evidenceByProject.get(p.project_id) ?? [],
      }]),
    };
  }

  async ledgerTotal(accountId: string, month: string): Promise<{ joules: number; rows: number }> {
    if (!isMonth(month)) throw new RangeError('month must be YYYY-MM');
    const row = await this.#handle.db
      .selectFrom('ledger')
      .select([sql<number>`coalesce(sum(billable_mj), 0)`.as('mj'), sql<number>`count(*)`.as('rows')])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .executeTakeFirstOrThrow();
    return { joules: toJoules(Number(row.mj)), rows: Number(row.rows) };
  }
}
