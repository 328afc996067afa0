/**
 * The data dir's modes helper: folders 0700 and files 0600 whatever the umask, leftovers of an
 * older svc made private, and folders above the ones it made left alone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { withUmask } from '../helpers/private-modes.ts';
import { makeHandlePrivate, makePrivateDir, makePrivateDirSync, preparePrivateDatabase } from '../../src/shared/private-files.ts';

const modeOf = (path: string): number => statSync(path).mode & 0o777;

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('private files', () => {
  it('makes every folder it creates 0700, under umask 000 and 022, and leaves the folders above alone', async (t) => {
    const root = tempDir(t);
    chmodSync(root, 0o755);
    await withUmask(0o000, () => makePrivateDirSync(join(root, 'a', 'b', 'c')));
    await withUmask(0o022, () => makePrivateDir(join(root, 'x', 'y')));
    for (const dir of ['a', 'a/b', 'a/b/c', 'x', 'x/y']) assert.equal(modeOf(join(root, dir)), 0o700, dir);
    assert.equal(modeOf(root), 0o755);
  });

  it('tightens a folder that exists with a looser mode, but not its existing parents', async (t) => {
    const root = tempDir(t);
    mkdirSync(join(root, 'old', 'inner'), { recursive: true });
    chmodSync(join(root, 'old'), 0o755);
    chmodSync(join(root, 'old', 'inner'), 0o777);
    makePrivateDirSync(join(root, 'old', 'inner'));
    assert.equal(modeOf(join(root, 'old', 'inner')), 0o700);
    assert.equal(modeOf(join(root, 'old')), 0o755);
  });

  it('creates an SQLite file 0600 before SQLite opens it, so its WAL and shared memory are 0600 too', async (t) => {
    const root = tempDir(t);
    const path = join(root, 'store', 'data.db');
    await withUmask(0o000, () => {
      preparePrivateDatabase(path);
      const db = new DatabaseSync(path);
      try {
        db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);');
        for (const file of [path, `${path}-wal`, `${path}-shm`]) assert.equal(modeOf(file), 0o600, file);
      } finally {
        db.close();
      }
    });
    assert.equal(modeOf(join(root, 'store')), 0o700);
  });

  it('keeps an existing database whole and makes it and its leftovers 0600', (t) => {
    const root = tempDir(t);
    const path = join(root, 'data.db');
    const db = new DatabaseSync(path);
    db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (42);');
    writeFileSync(`${path}-journal`, '');
    for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) chmodSync(file, 0o644);
    preparePrivateDatabase(path);
    for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) assert.equal(modeOf(file), 0o600, file);
    assert.deepEqual({ ...db.prepare('SELECT x FROM t').get() }, { x: 42 });
    db.close();
  });

  it('makes an open file 0600 whatever mode it was made with', async (t) => {
    const path = join(tempDir(t), 'file');
    writeFileSync(path, 'kept', { mode: 0o666 });
    chmodSync(path, 0o666);
    const file = await open(path, 'a');
    try {
      await makeHandlePrivate(file);
    } finally {
      await file.close();
    }
    assert.equal(modeOf(path), 0o600);
    assert.equal(readFileSync(path, 'utf8'), 'kept');
  });
});
