/**
 * The embedded store's ledger writer thread: rows that arrive together commit together, a bad
 * row fails alone, and a writer whose thread fails says so on every row.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { LedgerWriter, LedgerWriterBusyError, LedgerWriterUnavailableError } from '../../../src/accounts/store/ledger-writer.ts';

function scratchDb(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ledger-writer-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'ledger.db');
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA journal_mode = WAL;
    create table rows (id text primary key, key text, amount integer not null check (amount >= 0), unique (key));
    create table commits (n integer);`);
  db.close();
  return path;
}

const INSERT = 'insert into rows (id, key, amount) values (?, ?, ?) on conflict (key) do nothing returning id';
const insert = async (writer: LedgerWriter, values: unknown[]): Promise<boolean> => (await writer.write('insert', values)) > 0;

test('rows sent while a batch is written go together in the next one; conflicts and bad rows are answered row by row', async (t) => {
  const path = scratchDb(t);
  const writer = new LedgerWriter({ path, statements: { insert: INSERT }, busyTimeoutMs: 1000 });
  t.after(() => writer.stop());
  // One alone first (a batch of one), then 200 at once: the first goes alone, the rest queue.
  assert.equal(await insert(writer, ['a', null, 1]), true);
  const results = await Promise.allSettled([
    ...Array.from({ length: 200 }, (_, i) => insert(writer, [`r${i}`, i % 100 === 0 ? 'twin' : null, i])),
    insert(writer, ['bad', null, -1]),
    insert(writer, ['a', null, 1]),
  ]);
  const inserted = results.slice(0, 200).map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'));
  // The first row with key 'twin' is stored, the second conflicts (false): nothing rejected.
  assert.deepEqual(inserted.filter((v) => v === false).length, 1);
  assert.equal(inserted.filter((v) => v === true).length, 199);
  assert.equal(results[200]!.status, 'rejected');
  assert.match(String((results[200] as PromiseRejectedResult).reason), /CHECK constraint/);
  assert.equal(results[201]!.status, 'rejected');
  assert.match(String((results[201] as PromiseRejectedResult).reason), /UNIQUE constraint/);
  // 203 rows: the first alone, then the one sent at once, then the rest together (however the
  // thread's replies fall, far fewer batches than rows).
  const { batches, rows } = writer.written;
  assert.equal(rows, 203);
  assert.ok(batches <= 10, `${batches} batches for ${rows} rows`);
  await writer.stop();

  const db = new DatabaseSync(path, { readOnly: true });
  try {
    assert.equal((db.prepare('select count(*) as n from rows').get() as { n: number }).n, 200);
  } finally {
    db.close();
  }
});

test('a writer whose thread fails (here: its database cannot be opened) rejects what it held and everything after, and stop() still returns', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ledger-writer-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const writer = new LedgerWriter({ path: join(dir, 'missing', 'ledger.db'), statements: { insert: INSERT }, busyTimeoutMs: 1000 });
  await assert.rejects(insert(writer, ['a', null, 1]), LedgerWriterUnavailableError);
  assert.equal(writer.available, false);
  await assert.rejects(insert(writer, ['b', null, 1]), LedgerWriterUnavailableError);
  await writer.stop();
});

test('a write that takes its whole transaction with it (disk full, a trigger\'s ROLLBACK) fails the writes before it, none stored; the rest go in a new one', async (t) => {
  const path = scratchDb(t);
  const setup = new DatabaseSync(path);
  // A trigger's RAISE(ROLLBACK) ends the transaction as a full disk or an I/O error would.
  setup.exec(`create trigger no_doom before insert on rows when new.id = 'doom' begin select raise(rollback, 'doomed'); end`);
  setup.close();
  const writer = new LedgerWriter({ path, statements: { insert: INSERT }, busyTimeoutMs: 1000 });
  t.after(() => writer.stop());
  // Hold the writer busy with one row, so the next three go as one batch.
  const first = insert(writer, ['first', null, 1]);
  const batch = await Promise.allSettled([insert(writer, ['a', null, 1]), insert(writer, ['doom', null, 1]), insert(writer, ['b', null, 1])]);
  assert.equal(await first, true);
  assert.deepEqual(batch.map((r) => r.status), ['rejected', 'rejected', 'fulfilled']);
  assert.match(String((batch[0] as PromiseRejectedResult).reason), /rolled back with its batch: doomed/);
  await writer.stop();
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    assert.deepEqual(db.prepare('select id from rows order by id').all().map((r) => r.id), ['b', 'first']);
  } finally {
    db.close();
  }
});

test('a database busy past busy_timeout rejects with LedgerWriterBusyError (the write was not made); the writer stays up', async (t) => {
  const path = scratchDb(t);
  const writer = new LedgerWriter({ path, statements: { insert: INSERT }, busyTimeoutMs: 50 });
  t.after(() => writer.stop());
  assert.equal(await insert(writer, ['a', null, 1]), true);
  const holder = new DatabaseSync(path);
  holder.exec('BEGIN IMMEDIATE');
  try {
    await assert.rejects(insert(writer, ['b', null, 1]), LedgerWriterBusyError);
    assert.equal(writer.available, true);
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  assert.equal(await insert(writer, ['c', null, 1]), true);
});
