import { ApiError } from './api-error.ts';

/**
 * The local job log's interface: the routes, the solve service's callers and the spaces
 * library report each finished job here, and src/telemetry writes it to `<data-dir>/logs`.
 * Libraries take a JobLog rather than importing telemetry, and default to NO_JOB_LOG, so they
 * run (and are tested) without one. A record names what ran, never what it was asked or
 * answered: no prompt, problem, solution or document text can be put in one.
 */
export const JOB_KINDS = ['chat', 'responses', 'completion', 'embeddings', 'rerank', 'solve', 'ingest'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** `cancelled`: the client went away before the answer was complete. */
export type JobOutcome = 'completed' | 'failed' | 'cancelled';

export interface JobRecord {
  kind: JobKind;
  /** The model, solver or embedder that did the work; null when the job failed before one was chosen. */
  name: string | null;
  durationMs: number;
  outcome: JobOutcome;
  /**
   * An error code (`problem_too_large`, `model_not_found`) or a failure class noted while the job
   * still answered (`retrieval_unavailable`); null when nothing went wrong.
   */
  errorType: string | null;
}

export interface JobLog {
  /** Must not throw or wait: it is called on the request path. */
  record(job: JobRecord): void;
}

export const NO_JOB_LOG: JobLog = { record: () => {} };

/** The stable code of what a job failed with: an ApiError's code, `internal_error` for anything else. */
export function errorTypeOf(error: unknown): string {
  return error instanceof ApiError ? error.code : 'internal_error';
}
