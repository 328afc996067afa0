import { createHash } from 'node:crypto';
import { ApiError, type ApiErrorOptions } from '../../shared/api-error.ts';
import { INLINE_JSON_BYTES } from '../../shared/json-body.ts';
import { newId } from '../../shared/new-id.ts';
import type { OffThread } from '../../shared/off-thread.ts';
import { siblingModule } from '../../shared/sibling-module.ts';
import { RawJsonBody } from '../solve-intake.ts';
import type { Substrate } from '../solve-schemas.ts';
import type { SolveService } from '../solve-service.ts';
import { InProcessJobQueue } from './in-process-job-queue.ts';
import { splitJobBody, type JobBody } from './job-intake.ts';
import type { JobProgress, JobQueue, JobQueueEvent } from './job-queue.ts';
import { TERMINAL_STATUSES, type SolveJobRecord, type SolveJobStatus, type SolveJobStore } from './solve-job-store.ts';

const JOB_INTAKE_MODULE = siblingModule('./job-intake', import.meta.url);

/**
 * Asynchronous solve jobs (`/api/solve/jobs`): a submission is checked as `POST /api/solve` would
 * check it, stored, queued and answered 202 at once; a worker of the queue runs it on the same
 * SolveService (the same threads, limits and answers as the synchronous endpoints) and stores the
 * answer for `retentionMs`. The job store is the truth (status, one outcome); the queue carries
 * ids; the events are this process's view of the changes, for SSE watchers.
 */
export interface SolveJobsOptions {
  service: SolveService;
  store: SolveJobStore;
  /** Default: an in-process queue (the embedded default). */
  queue?: JobQueue;
  /** Jobs running at once; default the service's worker threads. */
  concurrency?: number;
  /** How long a finished job (and its answer) is kept; default 24 h. */
  retentionMs?: number;
  /** Jobs that may wait beyond those running; a submission past it is answered 429; default 1000. */
  maxWaiting?: number;
  /** Where a large body is parsed (the daemon's intake worker); default: on the event loop. */
  offThread?: OffThread;
  /** Whether this process runs jobs (default) or only queues them for workers elsewhere (`--no-local-solves`). */
  runJobs?: boolean;
}

export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Lower runs first (BullMQ's order): enterprise plans ahead of the rest on the hosted tier. */
export const PRIORITY = { enterprise: 1, standard: 5 } as const;

export type SolveJobEventType = 'queued' | 'running' | 'progress' | SolveJobStatus;
export type SolveJobListener = (type: SolveJobEventType, job: SolveJobRecord) => void;

export interface SubmitCall {
  /** Who the job belongs to: the account on the hosted tier, '' locally. */
  owner: string;
  priority?: number;
  guard?: (substrate: Substrate) => void;
  onSolver?: (solver: string) => void;
}

/** How long a submission waits for the queue to take the job (Redis away: ioredis would wait forever). */
const QUEUE_ADD_DEADLINE_MS = 5_000;

/** `promise`, or a rejection once `ms` passed first (the promise itself goes on; its outcome is dropped). */
async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const notFound = (id: string) => ApiError.notFound(`No solve job '${id.slice(0, 64)}' (unknown, another account's, or past its retention).`, 'solve_job_not_found', 'id');
const cancelledError = (): ApiErrorOptions => ({ status: 409, type: 'invalid_request_error', code: 'solve_job_cancelled', message: 'The solve job was cancelled.', param: null });

export class SolveJobs {
  readonly retentionMs: number;
  readonly #service: SolveService;
  readonly #store: SolveJobStore;
  readonly #queue: JobQueue;
  readonly #maxWaiting: number;
  readonly #offThread: OffThread | undefined;
  readonly #listeners = new Map<string, Set<SolveJobListener>>();
  /** Problems settled of each running job, for GET and `progress` events. */
  readonly #progress = new Map<string, { completed: number; total: number }>();
  readonly #sweep: NodeJS.Timeout;
  #closing = false;

  private constructor(options: SolveJobsOptions) {
    this.#service = options.service;
    this.#store = options.store;
    this.#queue = options.queue ?? new InProcessJobQueue();
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.#maxWaiting = options.maxWaiting ?? 1000;
    this.#offThread = options.offThread;
    // Finished jobs past their retention are forgotten within a minute (GET refuses them at once).
    this.#sweep = setInterval(() => void this.#store.deleteExpired(Date.now()).catch(() => undefined), 60_000);
    this.#sweep.unref();
    if (options.runJobs !== false) this.#queue.process((id, signal, report) => this.#runJob(id, signal, report), options.concurrency ?? this.#service.workers);
    this.#queue.watch((event) => this.#remote(event));
  }

  /** Opens the service and takes up the jobs a previous process left queued or running (at-least-once). */
  static async open(options: SolveJobsOptions): Promise<SolveJobs> {
    const jobs = new SolveJobs(options);
    // Taken up in the background: a shared queue whose Redis is away must not hold the start
    // (the jobs stay queued in the store and are taken up again at the next start).
    // Only the queue entries are kept: the records hold each request body (up to 11 MB), and the
    // loop below may wait as long as Redis stays away.
    const unfinished = (await options.store.unfinished()).map(entryOf);
    void (async () => {
      for (const entry of unfinished) await jobs.#queue.add(entry);
    })().catch(() => undefined);
    return jobs;
  }

  get counts(): { waiting: number; running: number } {
    return this.#queue.counts;
  }

  /** `POST /api/solve/jobs`: checked now, queued, `created: false` for a `client_job_id` the owner already used with the same request. */
  async submit(body: unknown, call: SubmitCall): Promise<{ job: SolveJobRecord; created: boolean }> {
    if (this.#closing) throw ApiError.busy('The solve service is shutting down.', 5, 503, 'shutting_down');
    const { text, clientJobId } = await this.#split(body);
    // The request runs later exactly as stored; a large one is checked by the intake worker.
    const summary = await this.#service.check(text.length > INLINE_JSON_BYTES ? new RawJsonBody(Buffer.from(text)) : JSON.parse(text), call);
    const waiting = this.#queue.counts.waiting;
    if (waiting >= this.#maxWaiting) {
      throw ApiError.busy(`The solve job queue is full (${waiting} waiting). Retry later.`, 30, 429, 'solve_job_queue_full');
    }
    const now = Date.now();
    const record: SolveJobRecord = {
      id: newId('qjob_'), owner: call.owner, client_job_id: clientJobId, body: text,
      solver: summary.solver, substrate: summary.substrate, problems: summary.problems,
      priority: call.priority ?? PRIORITY.standard, status: 'queued', attempts: 0,
      created_at: now, started_at: null, finished_at: null, expires_at: null, result: null, error: null,
    };
    const { job, created } = await this.#store.insert(record);
    if (!created && digest(job.body) !== digest(text)) {
      throw new ApiError({
        status: 409, type: 'invalid_request_error', code: 'client_job_id_conflict', param: 'client_job_id',
        message: `'client_job_id' '${clientJobId}' was already used for a different request (job ${job.id}); use a new one.`,
      });
    }
    if (created) {
      try {
        await withDeadline(this.#queue.add(entryOf(job)), QUEUE_ADD_DEADLINE_MS);
      } catch {
        // The queue (Redis) did not take it: the job is recorded failed, so a late add that does
        // land runs nothing (every transition is conditional), and the caller is told to retry.
        const unavailable: ApiErrorOptions = {
          status: 503, type: 'server_error', code: 'solve_queue_unavailable', param: null, retryAfterSeconds: 5,
          message: 'The solve job queue (Redis) did not answer; the job was not queued. Retry later.',
        };
        const failedAt = Date.now();
        await this.#store.finish(job.id, { status: 'failed', error: JSON.stringify(unavailable) }, failedAt, failedAt + this.retentionMs);
        throw new ApiError(unavailable);
      }
      this.#emit('queued', job);
    }
    return { job, created };
  }

  /** The owner's job, or 404 (for another owner's too: nobody learns which ids exist). */
  async get(id: string, owner: string): Promise<SolveJobRecord> {
    const job = await this.#store.get(id);
    if (job === undefined || job.owner !== owner || (job.expires_at !== null && job.expires_at <= Date.now())) throw notFound(id);
    return job;
  }

  /** Its place among the waiting jobs (0: next), while it waits in this process's queue. */
  position(id: string): number | undefined {
    return this.#queue.position(id);
  }

  progress(id: string): JobProgress | undefined {
    return this.#progress.get(id);
  }

  /**
   * `DELETE /api/solve/jobs/:id`: recorded as cancelled first (so a run finishing meanwhile
   * cannot overwrite it), then taken out of the queue or, if it runs, stopped: the solve's
   * worker thread is terminated, a hardware job is cancelled at the provider. A finished job is
   * answered as it is.
   */
  async cancel(id: string, owner: string): Promise<SolveJobRecord> {
    const job = await this.get(id, owner);
    if (TERMINAL_STATUSES.has(job.status)) return job;
    const now = Date.now();
    if (await this.#store.finish(id, { status: 'cancelled', error: JSON.stringify(cancelledError()) }, now, now + this.retentionMs)) {
      this.#progress.delete(id);
      await this.#queue.cancel(id);
    }
    const after = await this.get(id, owner);
    this.#emit(after.status, after);
    return after;
  }

  /** Tells `listener` of each change of the job in this process; returns the unsubscribe. */
  subscribe(id: string, listener: SolveJobListener): () => void {
    let set = this.#listeners.get(id);
    if (set === undefined) this.#listeners.set(id, set = new Set());
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(id);
    };
  }

  /** Stops taking jobs; those running are stopped and left `running` in the store, to be taken up by the next open. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweep);
    await this.#queue.close();
  }

  async #split(body: unknown): Promise<{ text: string; clientJobId: string | null }> {
    if (body instanceof RawJsonBody) {
      if (this.#offThread !== undefined) return this.#offThread.run(JOB_INTAKE_MODULE, 'splitJobJson', [body.bytes]);
      const { request, clientJobId }: JobBody = splitJobBody(JSON.parse(body.bytes.toString('utf8')));
      return { text: JSON.stringify(request), clientJobId };
    }
    const { request, clientJobId } = splitJobBody(body);
    return { text: JSON.stringify(request), clientJobId };
  }

  #emit(type: SolveJobEventType, job: SolveJobRecord): void {
    for (const listener of this.#listeners.get(job.id) ?? []) listener(type, job);
  }

  /** Jobs still waiting have moved up one place: their watchers hear it as progress. */
  #positionsMoved(): void {
    for (const id of this.#listeners.keys()) {
      if (this.#queue.position(id) === undefined) continue;
      void this.#store.get(id).then((job) => { if (job !== undefined) this.#emit('progress', job); }, () => undefined);
    }
  }

  /** A job another process runs changed: its watchers here hear it from the store. */
  #remote(event: JobQueueEvent): void {
    if (event.type === 'progress') this.#progress.set(event.id, event.progress);
    if (event.type === 'finished' || event.type === 'abandoned') this.#progress.delete(event.id);
    if (event.type === 'abandoned') {
      // Every process watching hears it; the store keeps the first to record it. Why is BullMQ's failedReason on the job in Redis (kept a day).
      void this.#finish(event.id, { status: 'failed', error: JSON.stringify(ApiError.internal(undefined).toOptions()) }).catch(() => undefined);
      return;
    }
    if (!this.#listeners.has(event.id)) return;
    void this.#store.get(event.id).then((job) => {
      if (job === undefined) return;
      this.#emit(event.type === 'running' ? 'running' : event.type === 'progress' ? 'progress' : job.status, job);
    }, () => undefined);
  }

  async #runJob(id: string, signal: AbortSignal, report: (progress: JobProgress) => void): Promise<void> {
    this.#positionsMoved();
    if (!(await this.#store.start(id, Date.now()))) return;
    const started = await this.#store.get(id);
    if (started === undefined) return;
    this.#progress.set(id, { completed: 0, total: started.problems });
    this.#emit('running', started);
    const body = started.body.length > INLINE_JSON_BYTES ? new RawJsonBody(Buffer.from(started.body)) : JSON.parse(started.body);
    try {
      const answer = await this.#solveWithRoom(body, id, signal, report);
      await this.#finish(id, { status: 'completed', result: JSON.stringify(answer) });
    } catch (error) {
      if (signal.aborted || (error instanceof ApiError && error.code === 'shutting_down')) {
        // Cancelled: the record says so already. Stopped by a closing process: left running and
        // handed back to the queue (a throw is a retry), for another process or the next start.
        if ((await this.#store.get(id))?.status === 'cancelled') return;
        throw new Error(`solve job ${id} was interrupted by a closing process`, { cause: error });
      }
      const failed = error instanceof ApiError ? error : ApiError.internal(error);
      await this.#finish(id, { status: 'failed', error: JSON.stringify(failed.toOptions()) });
    } finally {
      this.#progress.delete(id);
    }
  }

  /**
   * The service's pool is shared with the synchronous endpoints: when they fill it, the job waits
   * for room (the Retry-After the pool names) instead of failing.
   */
  async #solveWithRoom(body: unknown, id: string, signal: AbortSignal, report: (progress: JobProgress) => void): Promise<unknown> {
    for (;;) {
      try {
        return await this.#service.solve(body, {
          signal, stop: signal,
          onProblemSettled: (completed, total) => {
            this.#progress.set(id, { completed, total });
            report({ completed, total });
            void this.#store.get(id).then((job) => { if (job !== undefined && job.status === 'running') this.#emit('progress', job); }, () => undefined);
          },
        });
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'solve_queue_full') || signal.aborted) throw error;
        await waitOrAbort((error.retryAfterSeconds ?? 1) * 1000, signal);
      }
    }
  }

  async #finish(id: string, outcome: { status: 'completed' | 'failed'; result?: string; error?: string }): Promise<void> {
    const now = Date.now();
    if (!(await this.#store.finish(id, outcome, now, now + this.retentionMs))) return;
    const job = await this.#store.get(id);
    if (job !== undefined) this.#emit(job.status, job);
  }
}

function entryOf(job: SolveJobRecord) {
  return { id: job.id, priority: job.priority, lane: job.substrate === 'vendor-eagle' ? 'hardware' as const : 'local' as const };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { signal.removeEventListener('abort', abort); resolve(); }, ms);
    const abort = () => { clearTimeout(timer); reject(signal.reason); };
    signal.addEventListener('abort', abort, { once: true });
  });
}
