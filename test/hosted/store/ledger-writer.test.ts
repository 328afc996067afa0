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
import { LedgerWriter, LedgerWriterUnavailableError } from '../../../src/hosted/store/ledger-writer.ts';

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

test('rows sent while a batch is written go together in the next one; conflicts and bad rows are answered row by row', async (t) => {
  const path = scratchDb(t);
  const writer = new LedgerWriter({ path, insertSql: INSERT, busyTimeoutMs: 1000 });
  t.after(() => writer.stop());
  // One alone first (a batch of one), then 200 at once: the first goes alone, the rest queue.
  assert.equal(await writer.insert(['a', null, 1]), true);
  const results = await Promise.allSettled([
    ...Array.from({ length: 200 }, (_, i) => writer.insert([`r${i}`, i % 100 === 0 ? 'twin' : null, i])),
    writer.insert(['bad', null, -1]),
    writer.insert(['a', null, 1]),
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
  const writer = new LedgerWriter({ path: join(dir, 'missing', 'ledger.db'), insertSql: INSERT, busyTimeoutMs: 1000 });
  await assert.rejects(writer.insert(['a', null, 1]), LedgerWriterUnavailableError);
  assert.equal(writer.available, false);
  await assert.rejects(writer.insert(['b', null, 1]), LedgerWriterUnavailableError);
  await writer.stop();
});
