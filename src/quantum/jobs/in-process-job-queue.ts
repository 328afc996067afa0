import type { JobHandler, JobQueue, JobQueueEntry, JobQueueEvent } from './job-queue.ts';

/**
 * The embedded default's job queue: waiting jobs in priority then arrival order, at most
 * `concurrency` handlers at once, in this process's memory. What survives a restart is the job
 * store: the service re-adds unfinished jobs when it opens (solve-jobs.ts).
 */
export class InProcessJobQueue implements JobQueue {
  readonly #waiting: (JobQueueEntry & { seq: number })[] = [];
  readonly #running = new Map<string, AbortController>();
  readonly #settled = new Set<Promise<void>>();
  #handler: JobHandler | undefined;
  #concurrency = 1;
  #seq = 0;
  #closed = false;

  async add(entry: JobQueueEntry): Promise<void> {
    if (this.#closed || this.#running.has(entry.id) || this.#waiting.some((w) => w.id === entry.id)) return;
    const item = { ...entry, seq: this.#seq++ };
    // Kept sorted: the first waiting entry with a larger priority is where this one goes.
    const at = this.#waiting.findIndex((w) => w.priority > item.priority);
    if (at < 0) this.#waiting.push(item);
    else this.#waiting.splice(at, 0, item);
    this.#pump();
  }

  async cancel(id: string): Promise<void> {
    const at = this.#waiting.findIndex((w) => w.id === id);
    if (at >= 0) this.#waiting.splice(at, 1);
    else this.#running.get(id)?.abort(new Error('cancelled'));
  }

  /** Every job runs in this process: its changes are told by the handler itself. */
  watch(_listener: (event: JobQueueEvent) => void): void {}

  position(id: string): number | undefined {
    const at = this.#waiting.findIndex((w) => w.id === id);
    return at < 0 ? undefined : at;
  }

  get counts(): { waiting: number; running: number } {
    return { waiting: this.#waiting.length, running: this.#running.size };
  }

  process(handler: JobHandler, concurrency: number): void {
    this.#handler = handler;
    this.#concurrency = Math.max(1, Math.floor(concurrency));
    this.#pump();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#waiting.length = 0;
    for (const controller of this.#running.values()) controller.abort(new Error('closing'));
    await Promise.all(this.#settled);
  }

  #pump(): void {
    const handler = this.#handler;
    if (handler === undefined || this.#closed) return;
    while (this.#running.size < this.#concurrency && this.#waiting.length > 0) {
      const { id } = this.#waiting.shift()!;
      const controller = new AbortController();
      this.#running.set(id, controller);
      // A handler reports its own failures into the job store; one that throws anyway must not stop the queue.
      const settled: Promise<void> = handler(id, controller.signal, () => undefined).catch(() => undefined).then(() => {
        this.#running.delete(id);
        this.#settled.delete(settled);
        this.#pump();
      });
      this.#settled.add(settled);
    }
  }
}
