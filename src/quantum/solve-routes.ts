import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../shared/api-error.ts';
import { defaultItemErrorBody } from './batch-results.ts';
import { INLINE_JSON_BYTES, parseJsonBody } from '../shared/json-body.ts';
import { stringifyInSlices } from '../shared/json-in-slices.ts';
import { RawJsonBody } from './solve-intake.ts';
import type { BatchItemError, Substrate } from './solve-schemas.ts';
import type { SolveCallOptions, SolveService } from './solve-service.ts';

/**
 * `POST /solve` and `POST /solve/batch` as a Fastify plugin: the daemon registers it with
 * prefix `/api`, and the hosted tier can mount the same plugin behind its own hooks. Errors
 * are thrown as ApiError for the app's error handler (400 bad JSON comes from Fastify's parser).
 */
export interface SolveRoutesOptions {
  service: SolveService;
  /** Refuses a substrate for a caller (throws), after validation and before the substrate is consulted. */
  guard?: (request: FastifyRequest, substrate: Substrate) => void;
  /** A failed batch item's error in this face's envelope (default: the local runtime's fields). */
  itemError?: (error: ApiError) => BatchItemError;
}

/** Room for a batch of 10 problems of 1 MB each plus the envelope; each problem is then checked on its own (413). */
export const SOLVE_BODY_LIMIT = 11 * 1024 * 1024;

/**
 * This scope's own JSON parser: a large body stays bytes until the intake worker parses and
 * validates it, so a flood of 1 MB problems never holds the event loop.
 */
export function useRawJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) =>
    body.length > INLINE_JSON_BYTES ? new RawJsonBody(body) : parseJsonBody(body),
  );
}

export async function solveRoutes(app: FastifyInstance, opts: SolveRoutesOptions): Promise<void> {
  const { service } = opts;
  useRawJsonBodies(app);
  const { guard } = opts;
  const errorBody = opts.itemError ?? defaultItemErrorBody;
  const call = (request: FastifyRequest, reply: FastifyReply): SolveCallOptions => ({
    // A client that hangs up before its answer: queued hardware items are skipped and a running
    // provider job is cancelled (hardware-substrate.ts) instead of running on for nobody.
    signal: closedBeforeAnswer(reply),
    // The solver's name reaches the request log and the job log even when the solve then fails.
    onSolver: (solver) => { request.solver = solver; },
    ...(guard === undefined ? {} : { guard: (substrate: Substrate) => guard(request, substrate) }),
    // A failed item's 500 says nothing inside the answer; its cause goes to the log, as the error handler does for a request.
    itemError: (error: ApiError, index: number) => {
      if (error.status >= 500) request.log.error({ err: error.cause ?? error, item: index }, `batch item ${index}: ${error.message}`);
      return errorBody(error, index);
    },
  });
  app.post('/solve', { bodyLimit: SOLVE_BODY_LIMIT, config: { job: 'solve' } }, async (request, reply) => service.solve(request.body, call(request, reply)));
  app.post('/solve/batch', { bodyLimit: SOLVE_BODY_LIMIT, config: { job: 'solve' } }, async (request, reply) => {
    const answer = await service.solveBatch(request.body, call(request, reply));
    // Ten 1M-bit qrngs are 10 MB of JSON: written an item or so at a time, not in one call.
    return reply.header('content-type', 'application/json; charset=utf-8').send(await stringifyInSlices(answer, 'results'));
  });
}

/** Aborts when the response's connection closes before the answer was written (the client went away). */
function closedBeforeAnswer(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
