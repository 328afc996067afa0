/**
 * The embedded hosted store's files are the operator's alone: hosted.db, its -wal and -shm
 * (which the ledger writer thread and the checkpointer open too) are 0600 in 0700 folders under
 * the most permissive umask, and files an older svc left readable are made private on open.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ChargeInput } from '../../../src/accounts/ledger-store.ts';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { newId } from '../../../src/shared/new-id.ts';
import { entriesNotPrivate, withUmask } from '../../helpers/private-modes.ts';

const PAID = { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false };

function charge(accountId: string, keyId: string, alone: boolean): ChargeInput {
  const evidenceId = newId('ev_');
  return {
    evidenceId, accountId, keyId, projectId: 'modes', idempotencyKey: null, promptTokens: 1, completionTokens: 1, outcome: 'completed', response: null, alone,
    route: {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'm', provider: 'p', latency_ms: 1,
      raw_joules: null, estimated_joules: 1, billable_joules: 1, fallback: false, fallback_reason: null, evidence_id: evidenceId,
    },
  };
}

describe('embedded hosted store file modes', () => {
  it('makes hosted.db, its WAL and shared memory 0600 and its folders 0700 under umask 000', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'svc-hosted-modes-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dataDir = join(root, 'data');
    await withUmask(0o000, async () => {
      const store = await openHostedStore({ dataDir });
      try {
        const account = await store.createAccount({ name: 'Modes', plan: PAID });
        const issued = await store.issueKey(account.id, { scope: 'supercomputer' });
        // Both paths: on the store's own connection, and concurrent ones through the writer thread.
        await store.recordCharge(charge(account.id, issued.key.id, true));
        await Promise.all(Array.from({ length: 20 }, () => store.recordCharge(charge(account.id, issued.key.id, false))));
        // Checked while open, when the WAL and shared-memory files exist.
        assert.ok(existsSync(join(dataDir, 'hosted', 'hosted.db-wal')));
        assert.ok(existsSync(join(dataDir, 'hosted', 'hosted.db-shm')));
        assert.deepEqual(entriesNotPrivate(dataDir), []);
      } finally {
        await store.close();
      }
    });
    assert.deepEqual(entriesNotPrivate(dataDir), []);
  });

  it('makes private the files and folders an older svc left readable by others', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'svc-hosted-modes-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'data', 'hosted');
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const path = join(dir, 'hosted.db');
    // What an older svc left after a crash: a database, its WAL and shared memory, all 0644.
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL; CREATE TABLE leftover (x); INSERT INTO leftover VALUES (1);');
    for (const file of [path, `${path}-wal`, `${path}-shm`]) chmodSync(file, 0o644);
    chmodSync(join(root, 'data'), 0o755);
    chmodSync(dir, 0o755);
    const store = await openHostedStore({ dataDir: join(root, 'data') });
    try {
      for (const file of [path, `${path}-wal`, `${path}-shm`]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
      assert.deepEqual(entriesNotPrivate(join(root, 'data')), []);
    } finally {
      await store.close();
      old.close();
    }
  });
});
