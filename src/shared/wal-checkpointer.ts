import { Worker } from 'node:worker_threads';
import { siblingModule } from './sibling-module.ts';

/**
 * Moves an SQLite store's WAL checkpoints off the event loop. SQLite's automatic checkpoint
 * runs inside whichever commit crosses 1,000 WAL pages, and with synchronous=NORMAL that
 * checkpoint fsyncs the database file: every couple of hundred ledger writes one hosted request
 * waited for the disk (recordCharge p99 1.29 ms against 0.54 ms without it, bench:hosted-store),
 * and a knowledge-space ingest spent a good part of its commits copying pages back. The
 * store's connection turns automatic checkpoints off (`PRAGMA wal_autocheckpoint = 0`) and this
 * worker, with a connection of its own, checkpoints the WAL passively a few times a second instead.
 */
export class WalCheckpointer {
  readonly #worker: Worker;
  #stopped: Promise<void> | undefined;

  constructor(path: string, intervalMs = 250) {
    this.#worker = new Worker(siblingModule('./wal-checkpoint-worker', import.meta.url), { workerData: { path, intervalMs } });
    // A store that is never closed must not keep the process alive.
    this.#worker.unref();
    this.#worker.on('error', () => {
      // The checkpointer is an optimisation: if it dies, SQLite still works (the WAL grows
      // until the next open checkpoints it); nothing to report to a request.
    });
  }

  /** Runs a last checkpoint and ends the worker. */
  stop(): Promise<void> {
    this.#stopped ??= new Promise<void>((resolve) => {
      this.#worker.once('exit', () => resolve());
      // Stopping is awaited: hold the process open until the worker is done.
      this.#worker.ref();
      this.#worker.postMessage('stop');
      // A worker that does not finish in time is ended anyway.
      setTimeout(() => void this.#worker.terminate(), 2_000).unref();
    });
    return this.#stopped;
  }
}
