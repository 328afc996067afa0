import { Worker } from 'node:worker_threads';
import { siblingModule } from '../../shared/sibling-module.ts';

/**
 * Writes the embedded store's ledger rows (and its other per-request write, a key's
 * last_used_at) on a thread of their own. An SQLite commit in WAL mode is a dozen and more small
 * writes to the WAL file plus its locks, the largest single cost of an authenticated, ledgered
 * hosted request on the event loop; here the event loop hands the row over and serves other
 * requests until the commit is done. Writes that arrive while a batch is being written go
 * together in the next one (up to MAX_BATCH): one transaction, one WAL commit for all of them
 * (group commit), so the cost per row falls as load rises instead of queueing behind the disk.
 *
 * A write's promise settles after its transaction committed: with synchronous=NORMAL in WAL
 * mode the row is in the operating system's hands, and a killed process loses nothing that was
 * answered. A write that could not be made because the thread could not start or died rejects
 * with LedgerWriterUnavailableError, and the store makes it on its own connection instead, so
 * the ledger never depends on this thread; one the database kept busy past busy_timeout rejects
 * with LedgerWriterBusyError (it was not made).
 */
export interface LedgerWriterSetup {
  path: string;
  /** The statements writes may name, by name (SQL with `?` parameters). */
  statements: Record<string, string>;
  busyTimeoutMs: number;
}

export interface LedgerWriterBatch {
  id: number;
  writes: { statement: string; values: unknown[] }[];
}

export type WriteResult = { ok: true; rows: number } | { ok: false; message: string; errcode?: number };

export interface LedgerWriterReply {
  id: number;
  results: WriteResult[];
}

/** This write was not made here: make it elsewhere (after checking it was not, if the thread died holding it). */
export class LedgerWriterUnavailableError extends Error {
  override name = 'LedgerWriterUnavailableError';
}

/** The database stayed locked past busy_timeout for this write: it was not made. */
export class LedgerWriterBusyError extends Error {
  override name = 'LedgerWriterBusyError';
}

interface Pending {
  statement: string;
  values: unknown[];
  resolve: (rows: number) => void;
  reject: (error: Error) => void;
}

/**
 * Most writes in one transaction: it bounds how long the writer holds SQLite's write lock, and
 * so how long a write on the store's own connection can wait for it (on the event loop).
 */
export const MAX_BATCH = 128;

/** SQLITE_BUSY and SQLITE_LOCKED (primary codes: node:sqlite reports extended ones, such as BUSY_SNAPSHOT 517). */
const BUSY_CODES = new Set([5, 6]);

export class LedgerWriter {
  readonly #worker: Worker;
  /** Writes waiting for the batch in flight to finish. */
  #queue: Pending[] = [];
  #inFlight: { id: number; writes: Pending[] } | undefined;
  #nextId = 1;
  #batches = 0;
  #rows = 0;
  #failed: LedgerWriterUnavailableError | undefined;
  #exited = false;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  /** Called once nothing is queued or in flight (stop() waits for that). */
  #drained: (() => void)[] = [];

  constructor(setup: LedgerWriterSetup) {
    this.#worker = new Worker(siblingModule('./ledger-writer-worker', import.meta.url), { workerData: setup });
    // Idle, it must not keep the process alive; a batch in flight holds it (see #send).
    this.#worker.unref();
    this.#worker.on('message', (reply: LedgerWriterReply) => this.#settle(reply));
    this.#worker.on('messageerror', (error) => this.#fail(error));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => {
      this.#exited = true;
      this.#fail(new Error(`exited with code ${code}`));
    });
  }

  /** False once the thread failed or stop() was called: the caller writes on its own connection. */
  get available(): boolean {
    return this.#failed === undefined && !this.#stopping;
  }

  /** Nothing queued or in flight: the thread holds no lock, so another connection may write now without waiting. */
  get idle(): boolean {
    return this.#inFlight === undefined && this.#queue.length === 0;
  }

  /** Batches and rows written so far: rows per batch is the group commit's effect. */
  get written(): { batches: number; rows: number } {
    return { batches: this.#batches, rows: this.#rows };
  }

  /** Runs one of the setup's statements with `values`; resolves with the number of rows it returned. */
  write(statement: string, values: unknown[]): Promise<number> {
    if (!this.available) return Promise.reject(this.#failed ?? new LedgerWriterUnavailableError('the ledger writer is stopped'));
    return new Promise<number>((resolve, reject) => {
      this.#queue.push({ statement, values, resolve, reject });
      if (this.#inFlight === undefined) this.#send();
    });
  }

  #send(): void {
    if (this.#queue.length === 0) {
      for (const done of this.#drained.splice(0)) done();
      return;
    }
    const writes = this.#queue.splice(0, MAX_BATCH);
    const batch = { id: this.#nextId++, writes };
    this.#inFlight = batch;
    this.#worker.ref();
    this.#worker.postMessage({ id: batch.id, writes: writes.map((w) => ({ statement: w.statement, values: w.values })) } satisfies LedgerWriterBatch);
  }

  #settle(reply: LedgerWriterReply): void {
    const batch = this.#inFlight;
    if (batch === undefined || batch.id !== reply.id) {
      this.#fail(new Error(`answered batch ${reply.id}, expected ${batch?.id ?? 'none'}`));
      return;
    }
    this.#inFlight = undefined;
    this.#worker.unref();
    this.#batches++;
    this.#rows += batch.writes.length;
    batch.writes.forEach((write, i) => {
      const result = reply.results[i];
      if (result === undefined) write.reject(new Error('the ledger writer gave no result for a write'));
      else if (result.ok) write.resolve(result.rows);
      else if (result.errcode !== undefined && BUSY_CODES.has(result.errcode & 0xff)) write.reject(new LedgerWriterBusyError(`the ledger writer found the database busy: ${result.message}`));
      else write.reject(new Error(`ledger write failed: ${result.message}`));
    });
    this.#send();
  }

  #fail(error: Error): void {
    if (this.#failed !== undefined) return;
    const failed = new LedgerWriterUnavailableError(`the ledger writer thread failed: ${error.message}`);
    this.#failed = failed;
    const waiting = [...(this.#inFlight?.writes ?? []), ...this.#queue];
    this.#inFlight = undefined;
    this.#queue = [];
    const settle = (): void => {
      for (const write of waiting) write.reject(failed);
      for (const done of this.#drained.splice(0)) done();
    };
    // A thread still running might yet commit the batch it holds: end it first, so that
    // whoever checks for a row after this rejection sees the final state.
    if (this.#exited) settle();
    else void this.#worker.terminate().finally(settle);
  }

  /** Takes no new writes, lets the queued and in-flight ones finish, then ends the thread. */
  stop(): Promise<void> {
    this.#stopping = true;
    this.#stopped ??= (async () => {
      if (this.#failed === undefined && (this.#inFlight !== undefined || this.#queue.length > 0)) {
        await new Promise<void>((resolve) => this.#drained.push(resolve));
      }
      if (this.#failed !== undefined) {
        if (!this.#exited) await this.#worker.terminate();
        return;
      }
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.ref();
      this.#worker.postMessage('stop');
      // A thread that does not finish in time is ended anyway.
      const timer = setTimeout(() => void this.#worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
    })();
    return this.#stopped;
  }
}
