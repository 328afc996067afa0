import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ApiErrorOptions } from '../../shared/api-error.ts';
import { hijackReply } from '../../shared/hijack-reply.ts';
import { useRawJsonBodies, SOLVE_BODY_LIMIT } from '../solve-routes.ts';
import type { Substrate } from '../solve-schemas.ts';
import { TERMINAL_STATUSES, type SolveJobRecord } from './solve-job-store.ts';
import type { SolveJobEventType, SolveJobs } from './solve-jobs.ts';

/**
 * The solve-job endpoints, mounted beside solveRoutes (prefix `/api`) by the daemon and, behind
 * the key check, by the hosted tier (hosted-solve-plugin.ts):
 *   POST   /solve/jobs             202 {id, status: 'queued', …}; 200 for a client_job_id replay
 *   GET    /solve/jobs/:id         the job: status, position or progress, result when completed
 *   GET    /solve/jobs/:id/events  Server-Sent Events: queued → running → progress → completed | failed | cancelled
 *   DELETE /solve/jobs/:id         cancels; the job as it is after
 * Errors are ApiErrors for the face's error handler; a job's own error is written by `errorBody`.
 */
export interface SolveJobsRoutesOptions {
  jobs: SolveJobs;
  /** Whose jobs this caller sees: the account on the hosted tier; '' (one owner) locally. */
  owner?: (request: FastifyRequest) => string;
  /** The lane of a submission: lower runs first. */
  priority?: (request: FastifyRequest) => number;
  guard?: (request: FastifyRequest, substrate: Substrate) => void;
  /** A failed job's error in this face's envelope (default: the local runtime's fields). */
  errorBody?: (error: ApiError) => unknown;
  /** Aborted when the server drains: open event streams end (a watcher reconnects elsewhere, or later). */
  closing?: AbortSignal;
}

/** SSE comments keep proxies from closing a quiet stream (a 24-qubit solve can run for minutes). */
const HEARTBEAT_MS = 15_000;

const localErrorBody = (error: ApiError) => ({ message: error.message, type: error.type, param: error.param, code: error.code });
const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

export async function solveJobsRoutes(app: FastifyInstance, opts: SolveJobsRoutesOptions): Promise<void> {
  const { jobs } = opts;
  const ownerOf = opts.owner ?? (() => '');
  const errorBody = opts.errorBody ?? localErrorBody;
  useRawJsonBodies(app);

  const view = (job: SolveJobRecord): Record<string, unknown> => {
    const position = job.status === 'queued' ? jobs.position(job.id) : undefined;
    const progress = job.status === 'running' ? jobs.progress(job.id) : undefined;
    return {
      id: job.id,
      object: 'solve.job',
      status: job.status,
      solver: job.solver,
      substrate: job.substrate,
      client_job_id: job.client_job_id,
      problems: job.problems,
      attempts: job.attempts,
      created_at: seconds(job.created_at),
      started_at: seconds(job.started_at),
      finished_at: seconds(job.finished_at),
      expires_at: seconds(job.expires_at),
      ...(position === undefined ? {} : { position }),
      ...(progress === undefined ? {} : { progress }),
      // The solve (or batch) response exactly as POST /api/solve answers it.
      ...(job.result === null ? {} : { result: JSON.parse(job.result) as unknown }),
      ...(job.error === null ? {} : { error: errorBody(new ApiError(JSON.parse(job.error) as ApiErrorOptions)) }),
    };
  };

  app.post('/solve/jobs', { bodyLimit: SOLVE_BODY_LIMIT, config: { job: 'solve' } }, async (request, reply) => {
    const { guard } = opts;
    const { job, created } = await jobs.submit(request.body, {
      owner: ownerOf(request),
      priority: opts.priority?.(request),
      onSolver: (solver) => { request.solver = solver; },
      ...(guard === undefined ? {} : { guard: (substrate: Substrate) => guard(request, substrate) }),
    });
    return reply.code(created ? 202 : 200).header('location', `${request.url.replace(/\/+$/, '')}/${job.id}`).send(view(job));
  });

  app.get<{ Params: { id: string } }>('/solve/jobs/:id', async (request) => view(await jobs.get(request.params.id, ownerOf(request))));

  app.delete<{ Params: { id: string } }>('/solve/jobs/:id', async (request) => view(await jobs.cancel(request.params.id, ownerOf(request))));

  app.get<{ Params: { id: string } }>('/solve/jobs/:id/events', async (request, reply) => {
    const { id } = request.params;
    const owner = ownerOf(request);
    const job = await jobs.get(id, owner);
    streamEvents(reply, job, view, (listener) => jobs.subscribe(id, listener), () => jobs.get(id, owner), opts.closing);
  });
}

/**
 * One SSE stream: the job's state now (as an event named for its status), then each change;
 * the stream ends after a final status. Subscribed before the state is read again, so a change
 * between the first read and the subscription is not missed.
 */
function streamEvents(
  reply: FastifyReply,
  first: SolveJobRecord,
  view: (job: SolveJobRecord) => Record<string, unknown>,
  subscribe: (listener: (type: SolveJobEventType, job: SolveJobRecord) => void) => () => void,
  reread: () => Promise<SolveJobRecord>,
  closing: AbortSignal | undefined,
): void {
  // Headers set by hooks before this handler (the hosted CORS headers) are kept.
  const raw = hijackReply(reply);
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    closing?.removeEventListener('abort', end);
    raw.end();
  };
  let last = '';
  const send = (told: SolveJobEventType, job: SolveJobRecord) => {
    if (ended) return;
    // A change is told with the record read after it: a `progress` or `running` whose read found
    // the job already finished (reads of a shared store settle in any order) is its final event.
    const type = TERMINAL_STATUSES.has(job.status) ? job.status : told;
    // A change may be told twice (by this process and by a shared queue's events): sent once.
    const data = JSON.stringify(view(job));
    if (`${type}\n${data}` === last) return;
    last = `${type}\n${data}`;
    raw.write(`event: ${type}\ndata: ${data}\n\n`);
    if (TERMINAL_STATUSES.has(job.status)) end();
  };
  const unsubscribe = subscribe(send);
  const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  raw.once('close', end);
  if (closing?.aborted === true) queueMicrotask(end);
  closing?.addEventListener('abort', end, { once: true });
  send(first.status, first);
  // A change between the first read and the subscription would otherwise be lost.
  void reread().then((now) => { if (now.status !== first.status) send(now.status, now); }, end);
}
