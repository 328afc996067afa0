import { z } from 'zod';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { HostedError } from './hosted-error.ts';
import { PRIVACY_TIERS } from './route-config.ts';

/**
 * The planned retrieval-job runner: its request schema, the boundary rule, and the contract
 * `GET /api/v1/rag/jobs` describes. The runner is not live: a valid job is answered
 * `rag_job_runner_not_live`, and no job states exist.
 */

export const RAG_JOB_CLASSES = ['account_or_private_rerank', 'account_or_private_graph_summary', 'account_or_private_visual_rag'] as const;
export const DATA_BOUNDARIES = ['computer', 'account_supercomputer_sync', 'private_supercomputer', 'global_public_only'] as const;
/** Where the job's context comes from; only `public` and `mesh_safe` may cross into global_public_only. */
export const SOURCE_KINDS = ['account', 'private', 'customer', 'public', 'mesh_safe'] as const;
const PUBLIC_SOURCE_KINDS: ReadonlySet<string> = new Set(['public', 'mesh_safe']);

export const ragJobRequestSchema = z.strictObject({
  job_class: z.enum(RAG_JOB_CLASSES),
  data_boundary: z.enum(DATA_BOUNDARIES),
  privacy_tier: z.enum(PRIVACY_TIERS).optional(),
  account_id: z.string().min(1).max(128).optional(),
  /** Every planned job class reads account or private context, so no source means `account`. */
  source: z.strictObject({ kind: z.enum(SOURCE_KINDS) }).optional(),
});
export type RagJobRequest = z.infer<typeof ragJobRequestSchema>;

/**
 * Validates a job request for the account `accountId`; throws the answer for anything the
 * contract refuses, and `rag_job_runner_not_live` for a job that passes.
 */
export function submitRagJob(body: unknown, accountId: string): never {
  const job = parseWithSchema(ragJobRequestSchema, body);
  if (job.account_id !== undefined && job.account_id !== accountId) {
    throw new HostedError({ status: 403, type: 'permission_error', code: 'account_mismatch', param: 'account_id', message: 'account_id names another account than the key\'s.' });
  }
  const sourceKind = job.source?.kind ?? 'account';
  if (job.data_boundary === 'global_public_only' && (!PUBLIC_SOURCE_KINDS.has(sourceKind) || job.privacy_tier === 'personal')) {
    const why = job.privacy_tier === 'personal' && PUBLIC_SOURCE_KINDS.has(sourceKind) ? 'privacy_tier personal' : `a ${sourceKind} source${job.source === undefined ? ' (the default for account_or_private job classes)' : ''}`;
    throw new HostedError({
      status: 422, type: 'invalid_request_error', code: 'data_boundary_violation', param: 'data_boundary',
      message: `data_boundary global_public_only is only for public or explicitly mesh-safe context; this job has ${why}. Use computer, account_supercomputer_sync or private_supercomputer.`,
    });
  }
  throw new HostedError({
    status: 501, type: 'server_error', code: 'rag_job_runner_not_live',
    message: `The retrieval job runner is not live: the job passed validation (data_boundary ${job.data_boundary}) but was not queued, and no job was created.`,
    // OpenAI's clients retry a 5xx unless told not to; a retry cannot succeed.
    headers: { 'x-should-retry': 'false' },
  });
}

export function ragJobsContract(): Record<string, unknown> {
  return {
    status: 'planned',
    runner_live: false,
    submit: { method: 'POST', path: '/api/v1/rag/jobs', requires_key: true, answer: { status: 501, code: 'rag_job_runner_not_live' } },
    request: {
      job_class: { type: 'string', required: true, values: RAG_JOB_CLASSES },
      data_boundary: { type: 'string', required: true, values: DATA_BOUNDARIES },
      privacy_tier: { type: 'string', required: false, values: PRIVACY_TIERS },
      account_id: { type: 'string', required: false, description: "Must be the key's own account when given." },
      source: { type: 'object', required: false, fields: { kind: SOURCE_KINDS }, default: { kind: 'account' } },
    },
    boundary_rules: [
      'Every job emits data_boundary.',
      'global_public_only is only for public or explicitly mesh-safe context: a job with an account, private or customer source (or privacy_tier personal) and data_boundary global_public_only is refused with 422 data_boundary_violation.',
    ],
    job_states: [],
    evidence: {
      emits: ['data_boundary', 'job_class', 'privacy_tier', 'account_id'],
      not_claimed: ['Joules and route evidence prove paid compute use only; they do not prove that the shared pool owns or indexes a private corpus.'],
    },
  };
}
