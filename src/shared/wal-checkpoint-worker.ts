/**
 * An SQLite store's WAL checkpointer, on its own thread and connection (wal-checkpointer.ts
 * says why). PASSIVE never waits for the writer or for readers: it copies what it can and the
 * next round takes the rest.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const database = new DatabaseSync(path);
database.exec('PRAGMA busy_timeout = 0');
const checkpoint = database.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // Busy or locked for a moment: the next round copies what this one could not.
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try {
    checkpoint.get();
  } finally {
    database.close();
    parentPort?.close();
  }
});
