import { ApiError, type ApiErrorOptions } from '../shared/api-error.ts';
import type { BatchItem, BatchItemError, SolveMeta } from './solve-schemas.ts';

/**
 * Per-item outcomes of a batch. Each problem of a batch is solved on its own, so one that
 * cannot be solved (its schema does not match the solver, it does not fit the simulator, it
 * overran the time budget) is answered as a failed item with the error envelope it would have
 * had alone, while the others complete; the batch itself is answered 200. Only what is wrong
 * with the request as a whole stays a request-level error (see solve-intake.ts).
 */

/** A batch problem refused by intake (422 for its solver's schema): kept in place, answered as a failed item. */
export interface RejectedProblem {
  rejected: ApiErrorOptions;
}

export function isRejected(problem: object): problem is RejectedProblem {
  return Object.hasOwn(problem, 'rejected');
}

export type ItemResult = { solution: Record<string, unknown>; meta: SolveMeta };

/** How a failed item's error is written: the face's own envelope (the local runtime's by default). */
export type ItemErrorBody = (error: ApiError, index: number) => BatchItemError;

/** The local runtime's envelope fields (the same as a single solve's error body). */
export const defaultItemErrorBody: ItemErrorBody = (error) => ({ message: error.message, type: error.type, param: error.param, code: error.code });

/**
 * Params name the item: a worker speaks of `problem.…` (it sees one problem); in the batch
 * that is `problems.3.…` (or `problem.3.…` for `/solve` with `batch: true`).
 */
function placed(error: ApiError, field: string, index: number): ApiError {
  const param = error.param === null ? `${field}.${index}` : error.param.replace(/^problem(?=$|\.)/, `${field}.${index}`);
  if (param === error.param) return error;
  return new ApiError({ ...error.toOptions(), param, cause: error.cause });
}

/** Anything but an ApiError is an internal failure: an opaque 500 whose cause stays in the log. */
function asApiError(reason: unknown): ApiError {
  return reason instanceof ApiError ? reason : ApiError.internal(reason);
}

/**
 * Every item of a batch as its result entry, in request order: a problem intake refused (its
 * error already names its place), or how its run settled. A service shutting down is not one
 * item's failure: it refuses the whole request (503), as for a single solve.
 */
export function batchItems(
  outcomes: readonly (PromiseSettledResult<ItemResult> | RejectedProblem)[],
  field: string,
  errorBody: ItemErrorBody = defaultItemErrorBody,
): { results: BatchItem[]; counts: { total: number; completed: number; failed: number } } {
  const shutdown = outcomes.find((s): s is PromiseRejectedResult => !isRejected(s) && s.status === 'rejected' && s.reason instanceof ApiError && s.reason.code === 'shutting_down');
  if (shutdown !== undefined) throw shutdown.reason;
  const results = outcomes.map((s, index): BatchItem => {
    if (isRejected(s)) return { index, status: 'failed', solution: null, meta: null, error: errorBody(new ApiError(s.rejected), index) };
    if (s.status === 'fulfilled') return { index, status: 'completed', solution: s.value.solution, meta: s.value.meta };
    return { index, status: 'failed', solution: null, meta: null, error: errorBody(placed(asApiError(s.reason), field, index), index) };
  });
  const failed = results.filter((r) => r.status === 'failed').length;
  return { results, counts: { total: results.length, completed: results.length - failed, failed } };
}
