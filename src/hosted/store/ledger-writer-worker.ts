/**
 * The embedded store's ledger writer, on its own thread and connection (ledger-writer.ts says
 * why). Each message is a batch of rows for the one insert statement it was started with; the
 * batch commits as one transaction, so rows that arrived together cost one WAL commit.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { LedgerWriterBatch, LedgerWriterReply, LedgerWriterSetup } from './ledger-writer.ts';

const { path, insertSql, busyTimeoutMs } = workerData as LedgerWriterSetup;
const database = new DatabaseSync(path);
// The same settings as the store's own connection (open-hosted-store.ts says why).
database.exec(`
  PRAGMA synchronous = NORMAL;
  PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)};
  PRAGMA foreign_keys = ON;
  PRAGMA wal_autocheckpoint = 0;
`);
const insert = database.prepare(insertSql);

function insertOne(values: unknown[]): LedgerWriterReply['results'][number] {
  try {
    return { ok: true, inserted: insert.all(...(values as never[])).length > 0 };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

function write(batch: LedgerWriterBatch): LedgerWriterReply['results'] {
  if (batch.rows.length === 1) return [insertOne(batch.rows[0]!)];
  // A failing row rolls back only its own statement (SQLite's default ABORT), never its
  // neighbours; a failed COMMIT fails every row, none of which is then stored.
  try {
    database.exec('BEGIN IMMEDIATE');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return batch.rows.map(() => ({ ok: false, message }));
  }
  const results = batch.rows.map(insertOne);
  try {
    database.exec('COMMIT');
    return results;
  } catch (error) {
    try {
      database.exec('ROLLBACK');
    } catch {
      // Nothing open any more: the failed COMMIT already ended it.
    }
    const message = error instanceof Error ? error.message : String(error);
    return batch.rows.map(() => ({ ok: false, message }));
  }
}

parentPort?.on('message', (message: LedgerWriterBatch | 'stop') => {
  if (message === 'stop') {
    database.close();
    parentPort?.close();
    return;
  }
  const reply: LedgerWriterReply = { id: message.id, results: write(message) };
  parentPort?.postMessage(reply);
});
