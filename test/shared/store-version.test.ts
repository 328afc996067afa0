import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkStoreVersion, migrateStore, StoreVersionError } from '../../src/shared/store-version.ts';
import { UserError } from '../../src/shared/user-error.ts';
import { SVC_VERSION } from '../../src/shared/version.ts';

const WHERE = { store: 'test store', file: '/data/test.db' };

/** The StoreVersionError `fn` throws. */
function refusal(fn: () => unknown): StoreVersionError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof StoreVersionError, String(error));
    return error;
  }
  assert.fail('not refused');
}

test('checkStoreVersion: 0 (no marker) to the known version pass as they are', () => {
  for (const version of [0, 1, 2, 3]) assert.equal(checkStoreVersion(WHERE, version, 3), version);
});

test('checkStoreVersion: a newer version is a StoreVersionError naming the store, file, versions and what to do, in one line', () => {
  const error = refusal(() => checkStoreVersion(WHERE, 4, 3));
  assert.ok(error instanceof UserError, 'the CLI prints it as one line');
  assert.equal(error.exitCode, 2);
  assert.deepEqual([error.store, error.file, error.found, error.known], ['test store', '/data/test.db', 4, 3]);
  assert.equal(
    error.message,
    `test store /data/test.db has schema version 4, newer than this svc (${SVC_VERSION}) knows (3): a newer svc wrote it. Upgrade svc to open it, or point --data-dir at a backup made before the upgrade; the file was left as it is.`,
  );
  assert.doesNotMatch(error.message, /\n/);
});

test('checkStoreVersion: a marker that is not a whole number from 0 is refused as unreadable', () => {
  for (const bad of [-1, 1.5, Number.NaN, '2', null, undefined, {}]) {
    const error = refusal(() => checkStoreVersion(WHERE, bad, 3));
    assert.match(error.message, /^test store \/data\/test\.db has a schema version this svc cannot read \(.*; it knows up to 3\)\. Upgrade svc/);
    assert.equal(typeof error.found, 'string');
  }
});

test('migrateStore: runs the steps from the version found, stamping each; none when current; none at all when newer', () => {
  const ran: string[] = [];
  const steps = [() => ran.push('0->1'), () => ran.push('1->2'), () => ran.push('2->3')];
  const stamp = (v: number) => ran.push(`stamp ${v}`);
  assert.equal(migrateStore(WHERE, 0, steps, stamp), 3);
  assert.deepEqual(ran, ['0->1', 'stamp 1', '1->2', 'stamp 2', '2->3', 'stamp 3']);
  ran.length = 0;
  assert.equal(migrateStore(WHERE, 2, steps, stamp), 3);
  assert.deepEqual(ran, ['2->3', 'stamp 3']);
  ran.length = 0;
  assert.equal(migrateStore(WHERE, 3, steps, stamp), 3);
  assert.deepEqual(ran, [], 'migrating a current store is a no-op');
  assert.throws(() => migrateStore(WHERE, 4, steps, stamp), StoreVersionError);
  assert.deepEqual(ran, [], 'a newer store is refused before any step');
});

test('migrateStore: a failing step stops there, its version unstamped', () => {
  const stamped: number[] = [];
  const steps = [() => {}, () => { throw new Error('disk full'); }];
  assert.throws(() => migrateStore(WHERE, 0, steps, (v) => stamped.push(v)), /disk full/);
  assert.deepEqual(stamped, [1]);
});
