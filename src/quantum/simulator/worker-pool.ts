import { Worker } from 'node:worker_threads';
import { defaultThreads } from './parallel.ts';
import { reviveError, WorkerTaskError } from './worker-errors.ts';
import type { SerializedError } from './worker-errors.ts';

interface Pending {
  id: number;
  module: string;
  exportName: string;
  args: readonly unknown[];
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

interface Slot {
  worker: Worker;
  task: Pending | null;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };

export interface RunOptions {
  /** Aborting terminates the worker running the task (the only way to stop CPU-bound code) and rejects. */
  signal?: AbortSignal;
}

/**
 * A fixed set of worker threads that run CPU-heavy simulator work off the event loop.
 * A task names a module (absolute path or file: URL) and one of its function exports; arguments
 * and result cross by structured clone (SharedArrayBuffers are shared, not copied). Tasks queue
 * when every worker is busy. Idle workers are unref'd, so a pool never keeps a process alive.
 *
 * Inside a task, qaoaExpectation on ≥ PARALLEL_MIN_QUBITS qubits starts its own helper team:
 * when several tasks run at once, pass `threads: 1` to avoid oversubscribing the cores.
 */
export class SimulatorPool {
  readonly size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: { size?: number } = {}) {
    this.size = Math.max(1, Math.floor(options.size ?? defaultThreads()));
  }

  /** Tasks running now. */
  get busy(): number {
    return this.#slots.filter((s) => s.task !== null).length;
  }

  /** Tasks waiting for a worker. */
  get queued(): number {
    return this.#queue.length;
  }

  run<T>(module: string | URL, exportName: string, args: readonly unknown[] = [], options: RunOptions = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('SimulatorPool is closed'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const task: Pending = {
        id: this.#nextId++,
        module: module instanceof URL ? module.href : module,
        exportName,
        args,
        resolve: resolve as (v: unknown) => void,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        task.onAbort = () => this.#abort(task);
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
      this.#queue.push(task);
      this.#pump();
    });
  }

  #spawn(): Slot {
    const worker = new Worker(new URL('./task-worker.ts', import.meta.url));
    const slot: Slot = { worker, task: null };
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const task = slot.task;
      if (!task || task.id !== reply.id) return;
      this.#finish(slot);
      if (reply.ok) task.resolve(reply.value);
      else task.reject(reviveError(reply.error));
    });
    worker.on('error', (err) => this.#crashed(slot, err));
    worker.on('exit', (code) => this.#crashed(slot, new Error(`worker exited with code ${code}`)));
    this.#slots.push(slot);
    return slot;
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.task === null);
      if (!slot && this.#slots.length < this.size) slot = this.#spawn();
      if (!slot) return;
      const task = this.#queue.shift()!;
      slot.task = task;
      slot.worker.ref();
      slot.worker.postMessage({ id: task.id, module: task.module, exportName: task.exportName, args: task.args });
    }
  }

  #finish(slot: Slot): void {
    const task = slot.task;
    if (task?.signal && task.onAbort) task.signal.removeEventListener('abort', task.onAbort);
    slot.task = null;
    slot.worker.unref();
    queueMicrotask(() => this.#pump());
  }

  #remove(slot: Slot): void {
    const k = this.#slots.indexOf(slot);
    if (k >= 0) this.#slots.splice(k, 1);
  }

  #crashed(slot: Slot, err: unknown): void {
    if (!this.#slots.includes(slot)) return;
    this.#remove(slot);
    const task = slot.task;
    if (task) {
      if (task.signal && task.onAbort) task.signal.removeEventListener('abort', task.onAbort);
      const message = err instanceof Error ? err.message : String(err);
      task.reject(new WorkerTaskError(`simulator worker failed: ${message}`, 'WorkerCrash'));
    }
    if (!this.#closed) this.#pump();
  }

  #abort(task: Pending): void {
    const queued = this.#queue.indexOf(task);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      task.reject(task.signal!.reason);
      return;
    }
    const slot = this.#slots.find((s) => s.task === task);
    if (!slot) return;
    this.#remove(slot);
    slot.task = null;
    void slot.worker.terminate();
    task.reject(task.signal!.reason);
    this.#pump();
  }

  /** Rejects queued tasks and stops every worker. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const task of this.#queue.splice(0)) task.reject(new Error('SimulatorPool closed'));
    const slots = this.#slots.splice(0);
    for (const s of slots) s.task?.reject(new Error('SimulatorPool closed'));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

let shared: SimulatorPool | null = null;

/** The process-wide pool (defaultThreads() workers), created on first use. */
export function simulatorPool(): SimulatorPool {
  shared ??= new SimulatorPool();
  return shared;
}

/** Runs `exportName(...args)` from `module` on the process-wide pool, off the event loop. */
export function runInWorker<T>(module: string | URL, exportName: string, args: readonly unknown[] = [], options: RunOptions = {}): Promise<T> {
  return simulatorPool().run<T>(module, exportName, args, options);
}

/** Stops the process-wide pool (a new one starts on the next runInWorker). */
export async function shutdownSimulatorPool(): Promise<void> {
  const p = shared;
  shared = null;
  if (p) await p.close();
}
