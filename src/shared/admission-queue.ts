/**
 * A counting semaphore with a bounded wait list: up to `capacity` holders run at once, up to
 * `maxWaiting` more wait in FIFO order, and anything beyond is refused at once so the caller
 * can answer 503/429 with Retry-After instead of queueing without bound.
 */
export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class AdmissionQueue {
  readonly capacity: number;
  readonly maxWaiting: number;
  #running = 0;
  readonly #waiting: Waiter[] = [];

  constructor(capacity: number, maxWaiting: number) {
    if (!(capacity >= 1)) throw new RangeError('capacity must be at least 1');
    this.capacity = capacity;
    this.maxWaiting = Math.max(0, maxWaiting);
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves with a release function once a slot is free; rejects with QueueFullError or the abort reason. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#running < this.capacity) {
      this.#running++;
      return this.#releaser();
    }
    if (this.#waiting.length >= this.maxWaiting) throw new QueueFullError('queue is full');
    await new Promise<void>((resolve, reject) => {
      const entry: Waiter = { resolve, reject };
      if (signal !== undefined) {
        entry.signal = signal;
        entry.onAbort = () => {
          const i = this.#waiting.indexOf(entry);
          if (i >= 0) this.#waiting.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#waiting.push(entry);
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next === undefined) {
        this.#running--;
        return;
      }
      // Hand the slot straight to the next waiter: `running` stays the same.
      if (next.onAbort !== undefined) next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve();
    };
  }
}
