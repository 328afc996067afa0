import { Worker } from 'node:worker_threads';

/**
 * Writes the embedded store's ledger rows on a thread of their own. An SQLite commit in WAL mode
 * is a dozen and more small writes to the WAL file plus its locks, about a fifth of an
 * authenticated, ledgered hosted request's time on the event loop; here the event loop hands
 * the row over and is free until the commit is done. Rows that arrive while a batch is being
 * written go together in the next one: one transaction, one WAL commit for all of them (group
 * commit), so the cost per row falls as load rises instead of queueing behind the disk.
 *
 * A row's promise settles after its transaction committed: with synchronous=NORMAL in WAL mode
 * the row is in the operating system's hands, and a killed process loses nothing that was
 * answered. If the thread cannot start or dies, `insert` rejects and the store writes on its
 * own connection instead (the caller's fallback), so the ledger never depends on this thread.
 */
export interface LedgerWriterSetup {
  path: string;
  /** The ledger's insert (one row; RETURNING a column when the row was stored, none on conflict). */
  insertSql: string;
  busyTimeoutMs: number;
}

export interface LedgerWriterBatch {
  id: number;
  rows: unknown[][];
}

export interface LedgerWriterReply {
  id: number;
  results: ({ ok: true; inserted: boolean } | { ok: false; message: string })[];
}

interface Pending {
  values: unknown[];
  resolve: (inserted: boolean) => void;
  reject: (error: Error) => void;
}

export class LedgerWriterUnavailableError extends Error {
  override name = 'LedgerWriterUnavailableError';
}

export class LedgerWriter {
  readonly #worker: Worker;
  /** Rows waiting for the batch in flight to finish. */
  #queue: Pending[] = [];
  /** The batch being written, by id. */
  #inFlight: { id: number; rows: Pending[] } | undefined;
  #nextId = 1;
  #batches = 0;
  #rows = 0;
  #failed: Error | undefined;
  #stopped: Promise<void> | undefined;

  constructor(setup: LedgerWriterSetup) {
    this.#worker = new Worker(new URL('./ledger-writer-worker.ts', import.meta.url), { workerData: setup });
    // Idle, it must not keep the process alive; a batch in flight holds it (see #send).
    this.#worker.unref();
    this.#worker.on('message', (reply: LedgerWriterReply) => this.#settle(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new LedgerWriterUnavailableError(`the ledger writer thread exited (code ${code})`)));
  }

  /** False once the thread failed: the caller writes on its own connection from then on. */
  get available(): boolean {
    return this.#failed === undefined && this.#stopped === undefined;
  }

  /** Batches and rows written so far: rows per batch is the group commit's effect. */
  get written(): { batches: number; rows: number } {
    return { batches: this.#batches, rows: this.#rows };
  }

  /** Stores one row; true when it was inserted, false when it conflicted (ON CONFLICT DO NOTHING). */
  insert(values: unknown[]): Promise<boolean> {
    if (!this.available) return Promise.reject(this.#failed ?? new LedgerWriterUnavailableError('the ledger writer is stopped'));
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ values, resolve, reject });
      if (this.#inFlight === undefined) this.#send();
    });
  }

  #send(): void {
    const rows = this.#queue;
    if (rows.length === 0) return;
    this.#queue = [];
    const batch = { id: this.#nextId++, rows };
    this.#inFlight = batch;
    this.#worker.ref();
    this.#worker.postMessage({ id: batch.id, rows: rows.map((r) => r.values) } satisfies LedgerWriterBatch);
  }

  #settle(reply: LedgerWriterReply): void {
    const batch = this.#inFlight;
    if (batch === undefined || batch.id !== reply.id) return;
    this.#inFlight = undefined;
    this.#worker.unref();
    this.#batches++;
    this.#rows += batch.rows.length;
    batch.rows.forEach((row, i) => {
      const result = reply.results[i];
      if (result === undefined) row.reject(new Error('the ledger writer gave no result for a row'));
      else if (result.ok) row.resolve(result.inserted);
      else row.reject(new Error(`ledger insert failed: ${result.message}`));
    });
    this.#send();
  }

  #fail(error: Error): void {
    if (this.#failed !== undefined) return;
    this.#failed = error instanceof LedgerWriterUnavailableError ? error : new LedgerWriterUnavailableError(`the ledger writer thread failed: ${error.message}`);
    const waiting = [...(this.#inFlight?.rows ?? []), ...this.#queue];
    this.#inFlight = undefined;
    this.#queue = [];
    for (const row of waiting) row.reject(this.#failed);
  }

  /** Lets the batch in flight and the queued rows finish, then ends the thread. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      while (this.#inFlight !== undefined && this.#failed === undefined) {
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (this.#failed !== undefined) return;
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.ref();
      this.#worker.postMessage('stop');
      const timer = setTimeout(() => void this.#worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
    })();
    return this.#stopped;
  }
}
