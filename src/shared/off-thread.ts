import type { TransferListItem } from 'node:worker_threads';
import { ApiError } from './api-error.ts';
import { startWorkerThread } from './start-worker-thread.ts';
import { taskReplyValue, type TaskReply } from './task-reply.ts';
import { WorkerQueue } from './worker-queue.ts';
import { siblingModule } from './sibling-module.ts';

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
  module: string;
  exportName: string;
  args: unknown[];
  transfer: TransferListItem[];
}

/** What the intake worker is sent for a task (off-thread-worker.ts). */
export interface OffThreadTask {
  id: number;
  module: string;
  exportName: string;
  args: unknown[];
}

/**
 * What to transfer to send `bytes` to another thread without a copy: its memory, when the
 * array spans all of it (a Buffer from Node's shared pool does not, and is copied instead).
 */
export function transferListOf(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength ? [buffer] : [];
}

const shuttingDown = () => ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down');

export class OffThread {
  readonly maxPending: number;
  readonly idleMs: number;
  readonly #queue: WorkerQueue<Task, TaskReply, unknown>;

  constructor(options: OffThreadOptions = {}) {
    this.maxPending = Math.max(1, options.maxPending ?? 16);
    this.idleMs = options.idleMs ?? 2_000;
    this.#queue = new WorkerQueue({
      maxPending: this.maxPending,
      idleMs: this.idleMs,
      start: (events) => startWorkerThread(siblingModule('./off-thread-worker', import.meta.url), { name: 'intake' }, events),
      message: ({ module, exportName, args, transfer }, id) => ({ message: { id, module, exportName, args } satisfies OffThreadTask, transfer }),
      settle: (reply) => taskReplyValue(reply),
      errors: {
        full: () => ApiError.busy(`Too many large request bodies are being parsed (${this.pending}); retry shortly.`, 1, 503, 'server_busy'),
        closed: shuttingDown,
        // A worker that dies (out of memory, a bug) fails its task and is replaced on next use.
        died: (cause) => ApiError.internal(cause),
        unsent: (cause) => ApiError.internal(cause),
      },
    });
  }

  /** Whether the worker thread exists now (it exits when idle). */
  get started(): boolean {
    return this.#queue.workers.length > 0;
  }

  /** Tasks running or waiting now. */
  get pending(): number {
    return this.#queue.pending;
  }

  /**
   * Runs `module`'s export `exportName` with `args` on the worker. ApiErrors thrown there
   * arrive as ApiErrors; anything else is an opaque 500 (its detail goes to the log).
   */
  run<T>(module: URL, exportName: string, args: unknown[], transfer: TransferListItem[] = []): Promise<T> {
    return this.#queue.run({ module: module.href, exportName, args, transfer }) as Promise<T>;
  }

  close(): Promise<void> {
    return this.#queue.close();
  }
}
