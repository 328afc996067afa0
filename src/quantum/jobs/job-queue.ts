/**
 * The queue solve jobs wait in, between a gateway that accepted them and a worker that runs
 * them. Two engines stand behind it: an in-process queue on the embedded default
 * (in-process-job-queue.ts), and BullMQ on Redis when Redis is configured, shared by every
 * replica (not built yet: docs/scale-out.md says what is missing).
 *
 * Delivery is at least once: a job whose worker is lost runs again. The job store makes that
 * safe (a job records one outcome, the first: solve-job-store.ts), so the queue carries only ids.
 */
export interface JobQueueEntry {
  id: string;
  /** Lower runs first (BullMQ's convention); equal priorities run in arrival order. */
  priority: number;
}

/** Runs one job; `signal` aborts when the job is cancelled while it runs. */
export type JobHandler = (id: string, signal: AbortSignal) => Promise<void>;

export interface JobQueue {
  /** Queues a job; adding an id that waits or runs already changes nothing (idempotent by id). */
  add(entry: JobQueueEntry): void;
  /** Takes a waiting job out (true), or aborts its handler's signal if it runs (true); false when the queue does not hold it. */
  cancel(id: string): boolean;
  /** 0 for the next job to start; undefined when the job does not wait here. */
  position(id: string): number | undefined;
  /** Jobs waiting and running now. */
  readonly counts: { waiting: number; running: number };
  /** Starts taking jobs, at most `concurrency` at once. */
  process(handler: JobHandler, concurrency: number): void;
  /** Stops taking jobs and aborts those running; resolves once their handlers returned. */
  close(): Promise<void>;
}
