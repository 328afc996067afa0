/**
 * The spaces store's migrations (space-store-schema.ts): a new file and a version-1 file (what
 * svc 0.1.0 wrote: test/fixtures/data-dir-0.1.0) reach the same newest schema, the version-1
 * file's spaces gain the search defaults' column defaults, a current file is not written, and a
 * newer one is refused before anything is.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { StoreVersionError } from '../../src/shared/store-version.ts';
import { checkSpacesVersion, migrate } from '../../src/spaces/space-store-schema.ts';

const FIXTURE = new URL('../fixtures/data-dir-0.1.0/spaces/spaces.db', import.meta.url).pathname;
const NEWEST = 2;

function withFile(t: { after: (fn: () => void) => void }, from?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-spaces-schema-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'spaces.db');
  if (from !== undefined) copyFileSync(from, path);
  return path;
}

function withDb<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const version = (db: DatabaseSync) => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
const columns = (db: DatabaseSync) => db.prepare('PRAGMA table_info(spaces)').all().map((c) => ({ ...c }));

test('a new file is made at the newest version with the search-default columns', (t) => {
  const path = withFile(t);
  withDb(path, (db) => {
    migrate(db, path);
    assert.equal(version(db), NEWEST);
    const byName = new Map(columns(db).map((c) => [c.name, c]));
    assert.deepEqual([byName.get('rerank')?.type, byName.get('rerank')?.notnull, byName.get('rerank')?.dflt_value], ['TEXT', 1, "'false'"]);
    assert.deepEqual([byName.get('rerank_depth')?.type, byName.get('rerank_depth')?.notnull, byName.get('rerank_depth')?.dflt_value], ['INTEGER', 0, 'NULL']);
  });
});

test('a version-1 file (svc 0.1.0) takes the one new step: its space keeps its data and gets rerank false, depth null', (t) => {
  const fresh = withFile(t);
  const freshColumns = withDb(fresh, (db) => (migrate(db, fresh), columns(db)));
  const path = withFile(t, FIXTURE);
  withDb(path, (db) => {
    assert.equal(version(db), 1);
    const before = db.prepare('SELECT id, name, document_count, chunk_count FROM spaces').all().map((r) => ({ ...r }));
    assert.equal(before.length, 1);
    migrate(db, path);
    assert.equal(version(db), NEWEST);
    assert.deepEqual(columns(db), freshColumns, 'the same table as a new file has');
    const after = db.prepare('SELECT id, name, document_count, chunk_count, rerank, rerank_depth FROM spaces').all().map((r) => ({ ...r }));
    assert.deepEqual(after, before.map((r) => ({ ...r, rerank: 'false', rerank_depth: null })));
  });
});

test('a current file is not written when opened again, and a newer one is refused before any write', (t) => {
  const path = withFile(t, FIXTURE);
  withDb(path, (db) => migrate(db, path));
  const bytes = readFileSync(path);
  withDb(path, (db) => migrate(db, path));
  assert.ok(readFileSync(path).equals(bytes), 'migrating a current file changes nothing');

  withDb(path, (db) => db.exec(`PRAGMA user_version = ${NEWEST + 1}`));
  const newer = readFileSync(path);
  withDb(path, (db) => {
    assert.throws(() => checkSpacesVersion(db, path), StoreVersionError);
    assert.throws(() => migrate(db, path), (error: unknown) => error instanceof StoreVersionError && error.found === NEWEST + 1 && error.known === NEWEST);
  });
  assert.ok(readFileSync(path).equals(newer), 'the newer file is left byte for byte');
});
