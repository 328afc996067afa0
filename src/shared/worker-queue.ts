import type { TransferListItem } from 'node:worker_threads';

/**
 * A bounded queue of tasks run by a few workers (threads or processes) that may be killed.
 *
 * Why one primitive: svc sends work it must not do on the event loop (parsing a client's 16 MB
 * body, reading a hostile PDF, simulating 24 qubits) to workers, and every such place needs the
 * same guarantees, which are easy to get subtly wrong one at a time:
 * - tasks run in arrival order, at most `size` at once, and at most `maxPending` run or wait:
 *   beyond that a task is refused at once, so a flood holds bounded memory and the client can be
 *   told to retry (503/429 with Retry-After, the caller's error);
 * - a task's clock starts when a worker gets it, not while it waits; past `timeoutMs` the worker
 *   is stopped (the only way to stop CPU-bound code) and the task fails alone;
 * - a worker that dies (out of memory, a crash) fails only the task it ran; the next task gets a
 *   fresh worker, but only once the one it replaces has gone, so the memory a runaway task took
 *   is returned before a new worker may take more;
 * - a busy worker keeps the process alive, an idle one never does; with `idleMs` an idle worker
 *   also exits, and the heap it grew goes with it instead of staying resident;
 * - `stop` and `close` fail what runs and waits, at once, and stop every worker.
 *
 * Used by the JSON intake (off-thread.ts), document extraction (spaces/extraction-worker.ts) and
 * the solve pool (quantum/solve-service.ts). Left special on purpose: the ledger writer (one
 * thread that batches rows, no tasks to time out), the simulator's shared-memory teams (threads
 * that wait at barriers inside one evaluation) and the hardware substrate's worker (one
 * provider job at a time, polled, with its own deadline).
 *
 * What is left to the caller is what differs between them: how a worker starts and is bounded
 * (`start`: a thread with a heap limit, a process under `ulimit`), the message for a task, how a
 * reply becomes a value, and each error's wording and code (`errors`).
 */

/** How long a replacement waits for the worker it replaces to be gone, at most. */
const REPLACE_WAIT_MS = 5_000;

/** A worker as the queue drives it: a thread (start-worker-thread.ts) or a process (extraction-worker.ts). */
export interface QueueWorker {
  /** Hands it one task's message; throws when the message cannot be sent (the worker stays usable). */
  post(message: unknown, transfer: readonly TransferListItem[]): void;
  /** `true` while it runs a task (it keeps the process alive), `false` while it is idle (it does not). */
  hold(held: boolean): void;
  /** Stops it, resolving once it is gone; it reports nothing after this is called. */
  stop(): Promise<void>;
}

/**
 * What a worker reports to its queue. Reports come from the worker's own events, never from
 * inside `start`: a report made before `start` returns would reach a queue that does not hold
 * the worker yet, and be dropped.
 */
export interface QueueWorkerEvents<Reply> {
  /** A task's reply; it names the task by the `id` its message carried. */
  reply(reply: Reply): void;
  /** It died or failed to start; `cause` (an Error, or what its starter says) goes to `errors.died`. */
  died(cause: unknown): void;
}

/** The errors a queue fails tasks with: each caller's own wording, status and code. */
export interface WorkerQueueErrors<Task> {
  /** `maxPending` tasks already run or wait. */
  full(): unknown;
  /** The queue is closed, or was stopped while the task ran or waited. */
  closed(): unknown;
  /** The task ran past its `timeoutMs`, and its worker was stopped (only for a queue whose tasks have one). */
  timedOut?(task: Task, timeoutMs: number): unknown;
  /** The worker died while running the task. */
  died(cause: unknown, task: Task): unknown;
  /** No worker could be started for the task, or its message could not be sent. */
  unsent(cause: unknown, task: Task): unknown;
}

export interface WorkerQueueOptions<Task, Reply extends { id: number }, Value, W extends QueueWorker> {
  /** Workers at most; default 1. */
  size?: number;
  /** Tasks running or waiting at most; default no bound. */
  maxPending?: number;
  /** An idle worker stops after this long (a later task starts a fresh one); default: it stays. */
  idleMs?: number;
  /** Starts a worker that reports to `events`. */
  start(events: QueueWorkerEvents<Reply>): W;
  /** The message that runs `task`, built when the task starts; it must carry `id`, which its reply names. */
  message(task: Task, id: number): { message: unknown; transfer?: readonly TransferListItem[] };
  /** The task's value from its reply; throws the error to fail the task with. */
  settle(reply: Reply, task: Task): Value;
  errors: WorkerQueueErrors<Task>;
}

interface Job<Task, Value> {
  id: number;
  task: Task;
  timeoutMs: number | undefined;
  resolve: (value: Value) => void;
  reject: (error: unknown) => void;
}

interface Slot<Task, Value, W> {
  worker: W;
  job: Job<Task, Value> | undefined;
  /** Whether the worker is held (keeps the process alive): from a task's start until the queue is empty. */
  held: boolean;
  timer: NodeJS.Timeout | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

export class WorkerQueue<Task, Reply extends { id: number }, Value, W extends QueueWorker = QueueWorker> {
  readonly size: number;
  readonly maxPending: number;
  readonly idleMs: number | undefined;
  readonly #options: WorkerQueueOptions<Task, Reply, Value, W>;
  readonly #slots: Slot<Task, Value, W>[] = [];
  readonly #waiting: Job<Task, Value>[] = [];
  /** Workers stopped for a timeout or a death that have not exited yet: each still holds its place. */
  #replacing = 0;
  #nextId = 1;
  #closed = false;

  constructor(options: WorkerQueueOptions<Task, Reply, Value, W>) {
    this.#options = options;
    this.size = Math.max(1, Math.floor(options.size ?? 1));
    this.maxPending = options.maxPending ?? Infinity;
    this.idleMs = options.idleMs;
  }

  /** Tasks running now. */
  get running(): number {
    let running = 0;
    for (const slot of this.#slots) if (slot.job !== undefined) running++;
    return running;
  }

  /** Tasks waiting for a worker. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Tasks running or waiting. */
  get pending(): number {
    return this.running + this.#waiting.length;
  }

  /** How many more tasks `run` would take now. */
  get room(): number {
    return Math.max(0, this.maxPending - this.pending);
  }

  /** The workers alive now (idle or busy). */
  get workers(): readonly W[] {
    return this.#slots.map((slot) => slot.worker);
  }

  /** Whether `close` was called (`stop` leaves the queue open). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Runs `task` on the next free worker; past `timeoutMs` of running, its worker is stopped and it fails.
   * When `signal` aborts, a waiting task leaves the queue and a running one has its worker stopped
   * (the only way to stop CPU-bound code, as for a timeout): it fails with the signal's reason.
   */
  run(task: Task, timeoutMs?: number, signal?: AbortSignal): Promise<Value> {
    if (this.#closed) return Promise.reject(this.#options.errors.closed());
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.pending >= this.maxPending) return Promise.reject(this.#options.errors.full());
    return new Promise<Value>((resolve, reject) => {
      const job: Job<Task, Value> = { id: this.#nextId++, task, timeoutMs, resolve, reject };
      if (signal !== undefined) {
        const abort = () => this.#abort(job, signal.reason);
        signal.addEventListener('abort', abort, { once: true });
        const done = () => signal.removeEventListener('abort', abort);
        job.resolve = (value) => { done(); resolve(value); };
        job.reject = (error) => { done(); reject(error); };
      }
      this.#waiting.push(job);
      this.#pump();
    });
  }

  /** A cancelled task: out of the queue if it waits, its worker stopped if it runs. */
  #abort(job: Job<Task, Value>, reason: unknown): void {
    const waiting = this.#waiting.indexOf(job);
    if (waiting >= 0) {
      this.#waiting.splice(waiting, 1);
      job.reject(reason);
      return;
    }
    const slot = this.#slots.find((s) => s.job === job);
    if (slot !== undefined) this.#replace(slot, reason);
  }

  /** Starts every worker now, idle (a daemon does this at start, so that the first task does not pay for it). */
  warm(): void {
    while (!this.#closed && this.#slots.length + this.#replacing < this.size) this.#rest(this.#spawn());
  }

  /**
   * Fails every task running or waiting with `errors.closed()` and stops every worker. The queue
   * stays open: a later task starts a fresh worker (for a queue shared beyond one owner's life).
   */
  async stop(): Promise<void> {
    const closed = this.#options.errors.closed();
    for (const job of this.#waiting.splice(0)) job.reject(closed);
    const slots = this.#slots.splice(0);
    for (const slot of slots) {
      clearTimeout(slot.timer);
      clearTimeout(slot.idleTimer);
      slot.job?.reject(closed);
      slot.job = undefined;
    }
    await Promise.all(slots.map((slot) => slot.worker.stop()));
  }

  /** `stop`, and every later task is refused with `errors.closed()`. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.stop();
  }

  #pump(): void {
    if (this.#closed) return;
    while (this.#waiting.length > 0) {
      let slot = this.#slots.find((s) => s.job === undefined);
      if (slot === undefined) {
        if (this.#slots.length + this.#replacing >= this.size) return;
        try {
          slot = this.#spawn();
        } catch (error) {
          // No worker could start (ERR_WORKER_INIT_FAILED, no process): this task fails, the next tries again.
          const job = this.#waiting.shift()!;
          job.reject(this.#options.errors.unsent(error, job.task));
          continue;
        }
      }
      this.#dispatch(slot, this.#waiting.shift()!);
    }
    for (const slot of this.#slots) if (slot.job === undefined && slot.held) this.#rest(slot);
  }

  #spawn(): Slot<Task, Value, W> {
    // Held as it starts (a new thread or process keeps the process alive): rested if no task comes.
    const slot = { job: undefined, held: true, timer: undefined, idleTimer: undefined } as Slot<Task, Value, W>;
    slot.worker = this.#options.start({
      reply: (reply) => this.#settle(slot, reply),
      died: (cause) => {
        if (!this.#slots.includes(slot)) return;
        const job = slot.job;
        this.#replace(slot, job === undefined ? undefined : this.#options.errors.died(cause, job.task));
      },
    });
    this.#slots.push(slot);
    return slot;
  }

  #dispatch(slot: Slot<Task, Value, W>, job: Job<Task, Value>): void {
    clearTimeout(slot.idleTimer);
    slot.job = job;
    const { timeoutMs } = job;
    if (timeoutMs !== undefined) {
      slot.timer = setTimeout(() => {
        if (slot.job !== job) return;
        const { errors } = this.#options;
        this.#replace(slot, errors.timedOut === undefined ? new Error(`The task ran past its ${timeoutMs} ms.`) : errors.timedOut(job.task, timeoutMs));
      }, timeoutMs);
    }
    try {
      const { message, transfer = [] } = this.#options.message(job.task, job.id);
      slot.held = true;
      slot.worker.hold(true);
      slot.worker.post(message, transfer);
    } catch (error) {
      // The message never reached the worker (a value that cannot be cloned): this task fails
      // alone and the worker, which got nothing, takes the next one.
      clearTimeout(slot.timer);
      slot.job = undefined;
      job.reject(this.#options.errors.unsent(error, job.task));
    }
  }

  #settle(slot: Slot<Task, Value, W>, reply: Reply): void {
    const job = slot.job;
    if (job === undefined || job.id !== reply.id || !this.#slots.includes(slot)) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    try {
      job.resolve(this.#options.settle(reply, job.task));
    } catch (error) {
      job.reject(error);
    }
    this.#pump();
  }

  /** Takes `slot`'s worker out (it timed out or died), failing its task with `error`; a new one may start once it is gone. */
  #replace(slot: Slot<Task, Value, W>, error: unknown): void {
    const at = this.#slots.indexOf(slot);
    if (at < 0) return;
    this.#slots.splice(at, 1);
    clearTimeout(slot.timer);
    clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = undefined;
    this.#replacing++;
    let waiting = true;
    const gone = () => {
      if (!waiting) return;
      waiting = false;
      clearTimeout(bound);
      this.#replacing--;
      this.#pump();
    };
    // A worker whose stop never settles must not keep its slot forever (a queue of one would
    // then refuse every task): past REPLACE_WAIT_MS the next worker may start anyway.
    const bound = setTimeout(gone, REPLACE_WAIT_MS);
    bound.unref();
    slot.worker.stop().then(gone, gone);
    job?.reject(error);
  }

  /** The worker is idle: it no longer keeps the process alive, and with `idleMs` it exits unless a task comes. */
  #rest(slot: Slot<Task, Value, W>): void {
    slot.held = false;
    slot.worker.hold(false);
    const { idleMs } = this;
    if (idleMs === undefined) return;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      const at = this.#slots.indexOf(slot);
      if (at < 0 || slot.job !== undefined) return;
      this.#slots.splice(at, 1);
      void slot.worker.stop();
    }, idleMs);
    slot.idleTimer.unref();
  }
}
