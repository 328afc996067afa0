import { Worker } from 'node:worker_threads';
import { ApiError, type ApiErrorOptions } from '../shared/api-error.ts';
import { documentExpandsTooFar, documentUnreadable } from './extraction-errors.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';

/**
 * Runs extractors (PDF and DOCX always, large text files too) on a worker thread with a time and a memory
 * limit. pdf.js and the zip/XML parsers are third-party code fed hostile bytes: a PDF can make
 * pdf.js loop or inflate a stream without end, and a promise race cannot interrupt a thread
 * that never yields. A worker can be terminated. It also keeps the daemon's event loop free
 * while a 300-page PDF is read.
 *
 * One worker, tasks in arrival order; the clock of a task starts when the worker gets it, not
 * while it waits. A task past its time, or past the heap limit, takes the worker down with it
 * and the next task starts a fresh one. An idle worker exits after `idleMs` (pdf.js's heap goes
 * with it) and never keeps the process alive.
 */

export interface ExtractionWorkerOptions {
  /** Heap limit of the worker (old generation), MiB; default 1024. */
  maxHeapMb?: number;
  /** Idle time after which the worker exits; default 5 s. */
  idleMs?: number;
  /** Tasks allowed to run or wait; default 32 (then 503 `server_busy`). */
  maxPending?: number;
  /** The worker's script; default extraction-worker-thread.ts (tests give a misbehaving one). */
  script?: URL;
}

/** What the worker thread posts back for a task. */
export type ExtractionReply =
  | { id: number; ok: true; value: ExtractedDocument }
  | { id: number; ok: false; apiError: ApiErrorOptions | null; detail: string };

/** What the worker thread is sent. */
export interface ExtractionTask {
  id: number;
  format: DocumentFormat;
  bytes: Uint8Array;
}

interface Pending {
  task: ExtractionTask;
  timeoutMs: number;
  resolve: (value: ExtractedDocument) => void;
  reject: (error: unknown) => void;
}

const FORMAT_NAMES: Record<DocumentFormat, string> = {
  text: 'text file', markdown: 'markdown file', html: 'HTML file', pdf: 'PDF', docx: 'Word document', csv: 'CSV file', json: 'JSON file',
};

export class ExtractionWorker {
  readonly maxHeapMb: number;
  readonly idleMs: number;
  readonly maxPending: number;
  readonly #script: URL;
  readonly #queue: Pending[] = [];
  #running: { pending: Pending; timer: NodeJS.Timeout } | undefined;
  #worker: Worker | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #nextId = 1;

  constructor(options: ExtractionWorkerOptions = {}) {
    this.maxHeapMb = options.maxHeapMb ?? 1024;
    this.idleMs = options.idleMs ?? 5_000;
    this.maxPending = options.maxPending ?? 32;
    this.#script = options.script ?? new URL('./extraction-worker-thread.ts', import.meta.url);
  }

  /** Whether a worker thread exists now. */
  get started(): boolean {
    return this.#worker !== undefined;
  }

  run(format: DocumentFormat, bytes: Uint8Array, timeoutMs: number): Promise<ExtractedDocument> {
    if (this.#queue.length + (this.#running === undefined ? 0 : 1) >= this.maxPending) {
      return Promise.reject(ApiError.busy('Too many documents are being read; retry shortly.', 1, 503, 'server_busy'));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ task: { id: this.#nextId++, format, bytes }, timeoutMs, resolve, reject });
      this.#pump();
    });
  }

  /** Stops the worker; tasks still waiting fail with 503. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const closing = ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down');
    for (const pending of this.#queue.splice(0)) pending.reject(closing);
    if (this.#running !== undefined) {
      clearTimeout(this.#running.timer);
      this.#running.pending.reject(closing);
      this.#running = undefined;
    }
    await this.#discardWorker();
  }

  #pump(): void {
    if (this.#running !== undefined) return;
    const pending = this.#queue.shift();
    if (pending === undefined) {
      this.#worker?.unref();
      this.#scheduleIdleExit();
      return;
    }
    clearTimeout(this.#idleTimer);
    const { task, timeoutMs } = pending;
    const timer = setTimeout(() => {
      const seconds = Math.round(timeoutMs / 100) / 10;
      this.#fail(task.id, documentUnreadable(`Reading the ${FORMAT_NAMES[task.format]} took longer than ${seconds} s; it was stopped.`));
    }, timeoutMs);
    this.#running = { pending, timer };
    try {
      const worker = this.#spawn();
      worker.ref();
      worker.postMessage(task);
    } catch (error) {
      this.#fail(task.id, ApiError.internal(error));
    }
  }

  /** Ends the running task `id` with `error`; its worker may be mid-parse, so it goes too. */
  #fail(id: number, error: unknown): void {
    const running = this.#running;
    if (running === undefined || running.pending.task.id !== id) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    running.pending.reject(error);
    void this.#discardWorker().then(() => this.#pump());
  }

  async #discardWorker(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    worker.removeAllListeners();
    // A terminated worker may still report; nobody listens any more.
    worker.on('error', () => undefined);
    await worker.terminate();
  }

  #scheduleIdleExit(): void {
    clearTimeout(this.#idleTimer);
    if (this.#worker === undefined) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#running === undefined) void this.#discardWorker();
    }, this.idleMs);
    this.#idleTimer.unref();
  }

  #spawn(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(this.#script, { resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
    worker.on('message', (reply: ExtractionReply) => {
      const running = this.#running;
      if (running === undefined || running.pending.task.id !== reply.id) return;
      clearTimeout(running.timer);
      this.#running = undefined;
      if (reply.ok) running.pending.resolve(reply.value);
      else running.pending.reject(reply.apiError !== null ? new ApiError(reply.apiError) : ApiError.internal(new Error(reply.detail)));
      this.#pump();
    });
    const died = (error: unknown) => {
      if (this.#worker !== worker) return;
      const running = this.#running;
      if (running === undefined) {
        this.#worker = undefined;
        return;
      }
      const format = FORMAT_NAMES[running.pending.task.format];
      const outOfMemory = (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.#fail(
        running.pending.task.id,
        outOfMemory
          ? documentExpandsTooFar(`Reading the ${format} needs more than ${this.maxHeapMb} MiB of memory; it was stopped.`)
          : documentUnreadable(`The ${format} cannot be read: its parser failed (${error instanceof Error ? error.message : String(error)}).`, error),
      );
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the worker exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }
}

let shared: ExtractionWorker | undefined;

/** The process's extraction worker (created on first use). */
export function sharedExtractionWorker(): ExtractionWorker {
  shared ??= new ExtractionWorker();
  return shared;
}
