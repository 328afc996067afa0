/**
 * The queue solve jobs wait in, between a gateway that accepted them and a worker that runs
 * them. Two engines stand behind it: an in-process queue on the embedded default
 * (in-process-job-queue.ts), and BullMQ on Redis when Redis is configured (bullmq-job-queue.ts),
 * shared by every gateway and `svc worker`.
 *
 * Delivery is at least once: a job whose worker is lost runs again. The job store makes that
 * safe (a job records one outcome, the first: solve-job-store.ts), so the queue carries only ids.
 */
export type JobLane = 'local' | 'hardware';

export interface JobQueueEntry {
  id: string;
  /** Lower runs first (BullMQ's convention); equal priorities run in arrival order. */
  priority: number;
  /** `hardware` jobs (vendor-eagle) run one at a time across every process sharing the queue. */
  lane: JobLane;
}

export interface JobProgress {
  completed: number;
  total: number;
}

/** Runs one job; `signal` aborts when the job is cancelled while it runs; `report` tells watchers anywhere. */
export type JobHandler = (id: string, signal: AbortSignal, report: (progress: JobProgress) => void) => Promise<void>;

/** A change seen by the queue, possibly of a job another process runs. */
export type JobQueueEvent =
  | { id: string; type: 'running' }
  | { id: string; type: 'progress'; progress: JobProgress }
  | { id: string; type: 'finished' }
  /** The queue gave the job up (every attempt threw, or it stalled too often): no outcome was recorded by a run. */
  | { id: string; type: 'abandoned' };

export interface JobQueue {
  /** Queues a job; adding an id the queue holds already changes nothing (idempotent by id). */
  add(entry: JobQueueEntry): Promise<void>;
  /** Takes the job out if it waits, and stops it wherever it runs (the store already says cancelled). */
  cancel(id: string): Promise<void>;
  /** 0 for the next job to start; undefined when unknown (not waiting, or a shared queue). */
  position(id: string): number | undefined;
  /** Jobs waiting and running now (a shared queue's counts are at most a few seconds old). */
  readonly counts: { waiting: number; running: number };
  /** Starts taking jobs, at most `concurrency` at once. A gateway that only enqueues never calls it. */
  process(handler: JobHandler, concurrency: number): void;
  /** Tells `listener` of changes of jobs run by other processes (a shared queue only). */
  watch(listener: (event: JobQueueEvent) => void): void;
  /** Stops taking jobs and aborts those running; resolves once their handlers returned. */
  close(): Promise<void>;
}
