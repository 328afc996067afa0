/**
 * The embedded store's writer thread, with its own connection (ledger-writer.ts says why). Each
 * message is a batch of writes, each naming one of the statements the thread was started with;
 * a batch commits as one transaction, so writes that arrived together cost one WAL commit.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { LedgerWriterBatch, LedgerWriterReply, LedgerWriterSetup, WriteResult } from './ledger-writer.ts';
import { sqliteConnectionPragmas } from './sqlite-connection-settings.ts';

const { path, statements, busyTimeoutMs } = workerData as LedgerWriterSetup;
const database = new DatabaseSync(path);
// The same settings as the store's own connection.
database.exec(sqliteConnectionPragmas(busyTimeoutMs));
const prepared = new Map<string, StatementSync>(Object.entries(statements).map(([name, sql]) => [name, database.prepare(sql)]));

function failure(error: unknown): WriteResult {
  const { message = String(error), errcode } = (typeof error === 'object' && error !== null ? error : {}) as { message?: string; errcode?: unknown };
  return { ok: false, message, ...(typeof errcode === 'number' ? { errcode } : {}) };
}

function runOne(write: LedgerWriterBatch['writes'][number]): WriteResult {
  try {
    const statement = prepared.get(write.statement);
    if (statement === undefined) throw new Error(`unknown statement '${write.statement}'`);
    return { ok: true, rows: statement.all(...(write.values as never[])).length };
  } catch (error) {
    return failure(error);
  }
}

function rollback(): void {
  try {
    if (database.isTransaction) database.exec('ROLLBACK');
  } catch {
    // Already ended by the error that brought us here.
  }
}

/**
 * The batch's writes in as few transactions as they allow; returns their results. A write that fails
 * with its statement alone rolled back (a constraint: SQLite's default ABORT) fails alone. One
 * that takes the whole transaction with it (disk full, I/O error, a trigger's ROLLBACK) fails
 * the writes before it too, none of which is then stored, and the rest go in a fresh
 * transaction: no write is ever reported failed while stored, or stored while reported failed.
 */
function write(writes: LedgerWriterBatch['writes']): WriteResult[] {
  // Never inside a transaction left open (a ROLLBACK that failed): a write there would not commit.
  rollback();
  if (writes.length === 1) return [runOne(writes[0]!)];
  const results: WriteResult[] = [];
  while (results.length < writes.length) {
    const start = results.length;
    try {
      database.exec('BEGIN IMMEDIATE');
    } catch (error) {
      // Busy past busy_timeout, or worse: these writes were not made; the caller decides.
      for (let i = start; i < writes.length; i++) results.push(failure(error));
      return results;
    }
    let lost: Extract<WriteResult, { ok: false }> | undefined;
    for (let i = start; i < writes.length; i++) {
      const result = runOne(writes[i]!);
      results.push(result);
      if (!result.ok && !database.isTransaction) {
        lost = result;
        break;
      }
    }
    if (lost !== undefined) {
      for (let i = start; i < results.length - 1; i++) {
        if (results[i]!.ok) results[i] = { ok: false, message: `rolled back with its batch: ${lost.message}`, ...(lost.errcode === undefined ? {} : { errcode: lost.errcode }) };
      }
      continue;
    }
    try {
      database.exec('COMMIT');
    } catch (error) {
      rollback();
      const failed = failure(error);
      for (let i = start; i < results.length; i++) results[i] = failed;
    }
  }
  return results;
}

parentPort?.on('message', (message: LedgerWriterBatch | 'stop') => {
  if (message === 'stop') {
    database.close();
    parentPort?.close();
    return;
  }
  const reply: LedgerWriterReply = { id: message.id, results: write(message.writes) };
  parentPort?.postMessage(reply);
});
