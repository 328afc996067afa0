import { hostname } from 'node:os';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { newId } from '../../shared/new-id.ts';
import type { JobHandler, JobLane, JobProgress, JobQueue, JobQueueEntry, JobQueueEvent } from './job-queue.ts';

/**
 * Solve jobs on BullMQ (Redis), shared by every gateway and `svc worker` that names the same
 * Redis and prefix. One BullMQ queue per lane:
 * - `solve-local`: simulator jobs, taken by any process that runs solves, `concurrency` each;
 * - `solve-hardware`: vendor-eagle jobs, global concurrency 1, so the hardware provider sees one
 *   job at a time from the whole deployment, whichever replica took the request.
 * BullMQ gives priorities (lower first), retries with exponential backoff for a handler that
 * throws (the store or Redis failed; a solve's own failure is an outcome, not a retry), and
 * stalled-job recovery: a worker that dies (kill -9) stops renewing its lock, and after
 * `lockDurationMs` another worker takes the job again. The job store keeps that safe.
 *
 * Cancel reaches a job wherever it runs through a Redis channel every process listens on. Each
 * process that runs jobs also keeps a liveness record (workerRegistry below) for capacity.
 */
export interface BullJobQueueOptions {
  redisUrl: string;
  /** Key prefix: deployments sharing a Redis keep apart by it; default `svc`. */
  prefix?: string;
  /** How long a running job's lock lasts without renewal (a dead worker's job runs again after it); default 30 s. */
  lockDurationMs?: number;
  /** Attempts for a handler that throws; default 3. */
  attempts?: number;
}

const LANES: readonly JobLane[] = ['local', 'hardware'];
const queueName = (lane: JobLane) => `solve-${lane}`;

/** A worker process's liveness, as `svc worker` and gateways that run solves report it. */
export interface WorkerRecord {
  id: string;
  host: string;
  pid: number;
  /** Simulator jobs it runs at once. */
  concurrency: number;
  running: number;
  started_at: number;
  seen_at: number;
}

/** How long close() waits for BullMQ to close gracefully before cutting the connections. */
const CLOSE_DEADLINE_MS = 3_000;

/** Liveness records older than this are gone (a record is renewed every 5 s). */
export const WORKER_STALE_MS = 15_000;

export class BullJobQueue implements JobQueue {
  readonly workerId = newId('wk_', 12);
  readonly #options: Required<BullJobQueueOptions>;
  readonly #queues: Map<JobLane, Queue>;
  readonly #events: QueueEvents[] = [];
  readonly #workers: Worker[] = [];
  readonly #running = new Map<string, AbortController>();
  readonly #subscriber: Redis;
  readonly #publisher: Redis;
  #counts = { waiting: 0, running: 0 };
  readonly #timers: NodeJS.Timeout[] = [];
  #concurrency = 0;
  #closing = false;
  readonly #startedAt = Date.now();

  constructor(options: BullJobQueueOptions) {
    // An option given as undefined takes its default (a spread would keep the undefined).
    this.#options = {
      redisUrl: options.redisUrl,
      prefix: options.prefix ?? 'svc',
      lockDurationMs: options.lockDurationMs ?? 30_000,
      attempts: options.attempts ?? 3,
    };
    const connection = this.#connection();
    this.#queues = new Map(LANES.map((lane) => [lane, new Queue(queueName(lane), { connection, prefix: this.#options.prefix })]));
    // Redis away: BullMQ would print each connection error to stderr; callers see their own
    // failures (a submission's deadline, the counts kept as they were).
    for (const queue of this.#queues.values()) queue.on('error', () => undefined);
    void this.#queues.get('hardware')!.setGlobalConcurrency(1).catch(() => undefined);
    this.#publisher = new Redis(options.redisUrl, { maxRetriesPerRequest: null, retryStrategy: this.#retry });
    this.#subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null, retryStrategy: this.#retry });
    void this.#subscriber.subscribe(this.#cancelChannel).catch(() => undefined);
    this.#subscriber.on('message', (_channel: string, id: string) => this.#running.get(id)?.abort(new Error('cancelled')));
    this.#publisher.on('error', () => undefined);
    this.#subscriber.on('error', () => undefined);
    const refresh = setInterval(() => void this.#refreshCounts(), 2_000);
    refresh.unref();
    this.#timers.push(refresh);
    void this.#refreshCounts();
  }

  /**
   * Reconnect while open; once closing, stop, so that with Redis away the connections end and
   * whatever waits on them (BullMQ's close, a command queued for the reconnect) settles instead
   * of waiting for a Redis that is not coming.
   */
  readonly #retry = (times: number): number | null => (this.#closing ? null : Math.min(times * 200, 2_000));

  /** BullMQ's connection options: every queue, worker and event stream of this process. */
  #connection() {
    return { url: this.#options.redisUrl, maxRetriesPerRequest: null, retryStrategy: this.#retry };
  }

  get #cancelChannel(): string {
    return `${this.#options.prefix}:solve-jobs:cancel`;
  }

  get #workersKey(): string {
    return `${this.#options.prefix}:solve-workers`;
  }

  async add(entry: JobQueueEntry): Promise<void> {
    // jobId makes the add idempotent: BullMQ ignores an id it already holds.
    await this.#queues.get(entry.lane)!.add('solve', { id: entry.id }, {
      jobId: entry.id,
      priority: entry.priority,
      attempts: this.#options.attempts,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  async cancel(id: string): Promise<void> {
    // Waiting: out of its queue (a locked, running one is not removed: the channel stops it).
    for (const queue of this.#queues.values()) await queue.remove(id).catch(() => 0);
    this.#running.get(id)?.abort(new Error('cancelled'));
    await this.#publisher.publish(this.#cancelChannel, id);
  }

  position(): number | undefined {
    return undefined;
  }

  get counts(): { waiting: number; running: number } {
    return this.#counts;
  }

  process(handler: JobHandler, concurrency: number): void {
    this.#concurrency = Math.max(1, Math.floor(concurrency));
    const connection = this.#connection();
    for (const lane of LANES) {
      const worker = new Worker(queueName(lane), async (job: Job<{ id: string }>) => {
        const id = job.data.id;
        const controller = new AbortController();
        this.#running.set(id, controller);
        // Capacity is told as it changes, not only every 5 s.
        void this.#heartbeat();
        try {
          await handler(id, controller.signal, (progress: JobProgress) => void job.updateProgress({ ...progress }).catch(() => undefined));
        } finally {
          this.#running.delete(id);
          void this.#heartbeat();
        }
      }, {
        connection, prefix: this.#options.prefix,
        concurrency: lane === 'hardware' ? 1 : this.#concurrency,
        lockDuration: this.#options.lockDurationMs,
        stalledInterval: Math.max(1000, Math.floor(this.#options.lockDurationMs / 2)),
        maxStalledCount: 2,
      });
      worker.on('error', () => undefined);
      this.#workers.push(worker);
    }
    const beat = setInterval(() => void this.#heartbeat(), 5_000);
    beat.unref();
    this.#timers.push(beat);
    void this.#heartbeat();
  }

  watch(listener: (event: JobQueueEvent) => void): void {
    const connection = this.#connection();
    for (const lane of LANES) {
      const events = new QueueEvents(queueName(lane), { connection, prefix: this.#options.prefix });
      events.on('error', () => undefined);
      events.on('active', ({ jobId }) => listener({ id: jobId, type: 'running' }));
      events.on('progress', ({ jobId, data }) => {
        if (typeof data === 'object' && data !== null) listener({ id: jobId, type: 'progress', progress: data as JobProgress });
      });
      events.on('completed', ({ jobId }) => listener({ id: jobId, type: 'finished' }));
      // 'failed' is BullMQ's final failure (a retry is 'waiting' or 'delayed'): the job is given up.
      events.on('failed', ({ jobId }) => listener({ id: jobId, type: 'abandoned' }));
      this.#events.push(events);
    }
  }

  /** The liveness records of every process that runs jobs on this queue (stale ones dropped). */
  async workers(): Promise<WorkerRecord[]> {
    const all = await this.#publisher.hgetall(this.#workersKey);
    const now = Date.now();
    const live: WorkerRecord[] = [];
    for (const [id, text] of Object.entries(all)) {
      const record = JSON.parse(text) as WorkerRecord;
      if (now - record.seen_at <= WORKER_STALE_MS) live.push(record);
      else void this.#publisher.hdel(this.#workersKey, id).catch(() => undefined);
    }
    return live.sort((a, b) => a.started_at - b.started_at);
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const timer of this.#timers) clearInterval(timer);
    for (const controller of this.#running.values()) controller.abort(new Error('closing'));
    const graceful = (async () => {
      // close() waits for running processors (aborted above); a job left unfinished is taken up again.
      await Promise.all(this.#workers.map((w) => w.close().catch(() => undefined)));
      if (this.#workers.length > 0) await this.#publisher.hdel(this.#workersKey, this.workerId).catch(() => undefined);
      await Promise.all([...this.#events.map((e) => e.close().catch(() => undefined)), ...[...this.#queues.values()].map((q) => q.close().catch(() => undefined))]);
    })();
    // A safety net: the retry strategy above ends the connections when Redis is away, but a
    // close is never held longer than this (a job this process held is taken up again by
    // stalled-job recovery).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([graceful, new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_DEADLINE_MS); })]);
    clearTimeout(timer);
    this.#subscriber.disconnect();
    this.#publisher.disconnect();
  }

  async #heartbeat(): Promise<void> {
    const record: WorkerRecord = {
      id: this.workerId, host: hostname(), pid: process.pid, concurrency: this.#concurrency,
      running: this.#running.size, started_at: this.#startedAt, seen_at: Date.now(),
    };
    await this.#publisher.hset(this.#workersKey, this.workerId, JSON.stringify(record)).catch(() => undefined);
  }

  async #refreshCounts(): Promise<void> {
    try {
      let waiting = 0;
      let running = 0;
      for (const queue of this.#queues.values()) {
        const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
        waiting += (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);
        running += counts.active ?? 0;
      }
      this.#counts = { waiting, running };
    } catch {
      // Redis away for a moment: the last counts stand until it answers again.
    }
  }
}
