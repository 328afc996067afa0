import { Worker, type TransferListItem } from 'node:worker_threads';
import { ApiError, type ApiErrorOptions } from './api-error.ts';

/**
 * One worker thread for the request work that costs in proportion to what a client sends:
 * parsing and validating large bodies. The event loop hands the raw bytes over (transferred,
 * not copied) and gets back a verdict or a small, already-validated result, so `/health` and
 * every other request keep being served while a 10 MB body is parsed.
 *
 * A task names a module and one of its exported functions (the module is ours, never the
 * client's). Tasks run one at a time in arrival order; at most `maxPending` wait, beyond that
 * a request is refused 503 with Retry-After, so a flood of large bodies holds a bounded
 * amount of memory. The worker starts on first use, never keeps the process alive, and exits
 * after `idleMs` without work: the heap it grew parsing large bodies goes with it, instead of
 * staying resident until some later allocation makes its V8 collect.
 */
export interface OffThreadOptions {
  /** Tasks allowed to wait or run; default 16. */
  maxPending?: number;
  /** Idle time after which the worker exits (a later task starts a new one); default 2 s, as memory-relief.ts waits. */
  idleMs?: number;
}

interface Task {
  id: number;
  module: string;
  exportName: string;
  args: unknown[];
  transfer: TransferListItem[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export type OffThreadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; apiError: ApiErrorOptions | null; detail: string };

/**
 * What to transfer to send `bytes` to another thread without a copy: its memory, when the
 * array spans all of it (a Buffer from Node's shared pool does not, and is copied instead).
 */
export function transferListOf(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength ? [buffer] : [];
}

export class OffThread {
  readonly maxPending: number;
  readonly idleMs: number;
  readonly #queue: Task[] = [];
  #worker: Worker | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #running: Task | undefined;
  #nextId = 1;
  #closed = false;

  constructor(options: OffThreadOptions = {}) {
    this.maxPending = Math.max(1, options.maxPending ?? 16);
    this.idleMs = options.idleMs ?? 2_000;
  }

  /** Whether the worker thread exists now (it exits when idle). */
  get started(): boolean {
    return this.#worker !== undefined;
  }

  /** Tasks running or waiting now. */
  get pending(): number {
    return this.#queue.length + (this.#running === undefined ? 0 : 1);
  }

  /**
   * Runs `module`'s export `exportName` with `args` on the worker. ApiErrors thrown there
   * arrive as ApiErrors; anything else is an opaque 500 (its detail goes to the log).
   */
  run<T>(module: URL, exportName: string, args: unknown[], transfer: TransferListItem[] = []): Promise<T> {
    if (this.#closed) return Promise.reject(ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down'));
    if (this.pending >= this.maxPending) {
      return Promise.reject(ApiError.busy(`Too many large request bodies are being parsed (${this.pending}); retry shortly.`, 1, 503, 'server_busy'));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, module: module.href, exportName, args, transfer, resolve: resolve as (value: unknown) => void, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    const closing = ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down');
    for (const task of this.#queue.splice(0)) task.reject(closing);
    this.#running?.reject(closing);
    this.#running = undefined;
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #pump(): void {
    if (this.#running !== undefined || this.#closed) return;
    const task = this.#queue.shift();
    if (task === undefined) {
      this.#worker?.unref();
      this.#scheduleIdleExit();
      return;
    }
    clearTimeout(this.#idleTimer);
    this.#running = task;
    try {
      const worker = this.#spawn();
      worker.ref();
      const { id, module, exportName, args, transfer } = task;
      worker.postMessage({ id, module, exportName, args }, transfer);
    } catch (error) {
      // No thread could be started (ERR_WORKER_INIT_FAILED) or the arguments cannot be sent:
      // this task fails, the next one tries again.
      this.#running = undefined;
      task.reject(ApiError.internal(error));
      queueMicrotask(() => this.#pump());
    }
  }

  #scheduleIdleExit(): void {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    if (worker === undefined) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#worker !== worker || this.#running !== undefined) return;
      this.#worker = undefined;
      worker.removeAllListeners('message').removeAllListeners('exit');
      void worker.terminate();
    }, this.idleMs);
    this.#idleTimer.unref();
  }

  #spawn(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(new URL('./off-thread-worker.ts', import.meta.url));
    worker.on('message', (reply: OffThreadReply) => {
      const task = this.#running;
      if (task === undefined || task.id !== reply.id) return;
      this.#running = undefined;
      if (reply.ok) task.resolve(reply.value);
      else task.reject(reply.apiError !== null ? new ApiError(reply.apiError) : ApiError.internal(new Error(reply.detail)));
      this.#pump();
    });
    // A worker that dies (out of memory, a bug) fails its task and is replaced on next use.
    const fail = (error: unknown) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const task = this.#running;
      this.#running = undefined;
      task?.reject(ApiError.internal(error));
      this.#pump();
    };
    worker.on('error', (error) => fail(error));
    worker.on('exit', (code) => fail(new Error(`intake worker exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }
}
