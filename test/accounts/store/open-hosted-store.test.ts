/**
 * Opening the store: which one a URL picks, migrations when replicas start together, SQLite's
 * file settings and its data across a restart, and two PostgreSQL replicas charging one account.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ChargeInput } from '../../../src/accounts/ledger-store.ts';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { newId } from '../../../src/shared/new-id.ts';
import { freshPostgresSchema } from '../../helpers/hosted-stores.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from '../../helpers/test-services.ts';

const PAID = { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false };
const mj = (joules: number): number => Math.round(joules * 1000);

function charge(accountId: string, keyId: string, billable: number, idempotencyKey: string | null, at: Date): ChargeInput {
  const evidenceId = newId('ev_');
  return {
    evidenceId, accountId, keyId, projectId: 'load', idempotencyKey, promptTokens: 1, completionTokens: 1, outcome: 'completed', response: null, at,
    route: {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'm', provider: 'p', latency_ms: 1,
      raw_joules: null, estimated_joules: billable, billable_joules: billable, fallback: false, fallback_reason: null, evidence_id: evidenceId,
    },
  };
}

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hosted-open-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const NO_POSTGRES = await postgresUnavailable('the 2 openHostedStore tests on PostgreSQL replicas');

describe('openHostedStore', () => {
  it('refuses a URL that is not PostgreSQL and a schema that is not a plain identifier', async (t) => {
    const dataDir = tempDir(t);
    await assert.rejects(openHostedStore({ dataDir, databaseUrl: 'mysql://x@localhost/db' }), /postgres:\/\//);
    await assert.rejects(openHostedStore({ dataDir, databaseUrl: 'sqlite:///tmp/x.db' }), TypeError);
    for (const schema of ['Public', 'a;drop table x', 'a b', '', '1abc', `x${'y'.repeat(63)}`]) {
      await assert.rejects(openHostedStore({ dataDir, databaseUrl: TEST_DATABASE_URL, schema }), /schema/, schema);
    }
  });

  it('keeps SQLite in <dataDir>/hosted/hosted.db, in WAL mode, with its data across a restart', async (t) => {
    const dataDir = tempDir(t);
    const first = await openHostedStore({ dataDir, databaseUrl: '' });
    assert.equal(first.kind, 'sqlite');
    const account = await first.createAccount({ name: 'Persist', plan: PAID });
    const issued = await first.issueKey(account.id, { scope: 'developer_runtime' });
    const at = new Date(Date.UTC(2033, 2, 3));
    await first.recordCharge(charge(account.id, issued.key.id, 1.5, 'once', at));
    await first.close();

    const path = join(dataDir, 'hosted', 'hosted.db');
    assert.ok(existsSync(path));
    const raw = new DatabaseSync(path, { readOnly: true });
    try {
      assert.deepEqual({ ...raw.prepare('pragma journal_mode').get() }, { journal_mode: 'wal' });
    } finally {
      raw.close();
    }

    const second = await openHostedStore({ dataDir });
    t.after(() => second.close());
    assert.equal((await second.checkKey(issued.secret)).status, 'valid');
    assert.deepEqual(await second.ledgerTotal(account.id, '2033-03'), { joules: 1.5, rows: 1 });
    assert.equal((await second.recordCharge(charge(account.id, issued.key.id, 1.5, 'once', at))).status, 'duplicate');
    assert.equal((await second.allowance(account.id, at)).usedJoules, 1.5);
  });

  it('checkpoints the SQLite WAL on its own thread: the WAL stays small under thousands of ledger writes, and close ends the checkpointer', async (t) => {
    const dataDir = tempDir(t);
    const store = await openHostedStore({ dataDir });
    const account = await store.createAccount({ name: 'Wal', plan: PAID });
    const issued = await store.issueKey(account.id, { scope: 'supercomputer' });
    const at = new Date(Date.UTC(2034, 0, 5));
    const wal = join(dataDir, 'hosted', 'hosted.db-wal');
    // The store's own connection never checkpoints (wal_autocheckpoint = 0): without the
    // worker these 3,000 charges leave about 100 MB of WAL (measured); with it the WAL restarts
    // from its beginning after each complete checkpoint and stays near 17 MB.
    for (let i = 0; i < 3000; i++) {
      await store.recordCharge(charge(account.id, issued.key.id, 0.5, null, at));
      if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await new Promise((resolve) => setTimeout(resolve, 600));
    const size = statSync(wal).size;
    assert.ok(size < 40 * 1024 * 1024, `WAL is ${size} bytes`);
    assert.deepEqual(await store.ledgerTotal(account.id, '2034-01'), { joules: 1500, rows: 3000 });
    await store.close();
  });

  it('migrates once when two PostgreSQL replicas start together on a fresh schema', { skip: NO_POSTGRES }, async (t) => {
    const { schema, drop } = freshPostgresSchema();
    t.after(drop);
    const dataDir = tempDir(t);
    const replicas = await Promise.all([1, 2, 3].map(() => openHostedStore({ dataDir, databaseUrl: TEST_DATABASE_URL, schema })));
    t.after(() => Promise.all(replicas.map((r) => r.close())));
    for (const replica of replicas) assert.equal(replica.kind, 'postgres');
    const [a, b] = replicas;
    assert.ok(a !== undefined && b !== undefined);
    const account = await a.createAccount({ name: 'Migrated', plan: PAID });
    assert.equal((await b.getAccount(account.id))?.name, 'Migrated');
  });

  it('keeps the counter equal to the ledger when two PostgreSQL replicas charge 500 requests at once', { skip: NO_POSTGRES }, async (t) => {
    const { schema, drop } = freshPostgresSchema();
    t.after(drop);
    const dataDir = tempDir(t);
    const options = { dataDir, databaseUrl: TEST_DATABASE_URL, schema };
    const one = await openHostedStore(options);
    const two = await openHostedStore(options);
    t.after(async () => { await one.close(); await two.close(); });

    const account = await one.createAccount({ name: 'Replicas', plan: PAID });
    const issued = await one.issueKey(account.id, { scope: 'supercomputer' });
    assert.equal((await two.checkKey(issued.secret)).status, 'valid', 'a key issued on one replica works on the other');

    const at = new Date(Date.UTC(2034, 6, 9));
    // Every request is sent to both replicas, one in five twice, so both sides race on the same
    // Idempotency-Keys: 500 distinct keys must give exactly 500 rows.
    const sends: Promise<{ status: string; entry: { evidenceId: string; route: { billable_joules: number } } }>[] = [];
    for (let i = 0; i < 500; i++) {
      const joules = ((i * 7919) % 5000) / 1000 + 0.001;
      const replica = i % 2 === 0 ? one : two;
      sends.push(replica.recordCharge(charge(account.id, issued.key.id, joules, `req-${i}`, at)));
      if (i % 5 === 0) sends.push((replica === one ? two : one).recordCharge(charge(account.id, issued.key.id, joules, `req-${i}`, at)));
    }
    const results = await Promise.all(sends);
    const recorded = results.filter((r) => r.status === 'recorded');
    assert.equal(recorded.length, 500, 'one row per Idempotency-Key');
    assert.equal(results.length - recorded.length, 100, 'every retry answered as a duplicate');
    assert.equal(new Set(recorded.map((r) => r.entry.evidenceId)).size, 500);

    const expectedMj = recorded.reduce((sum, r) => sum + mj(r.entry.route.billable_joules), 0);
    for (const replica of [one, two]) {
      const total = await replica.ledgerTotal(account.id, '2034-07');
      assert.deepEqual([total.rows, mj(total.joules)], [500, expectedMj], 'no lost or doubled row');
      assert.equal(mj((await replica.allowance(account.id, at)).usedJoules), expectedMj, 'counter == ledger sum');
      const report = await replica.usage({ accountId: account.id, keyId: issued.key.id, month: '2034-07' });
      assert.equal(mj(report.key!.joules), expectedMj);
      assert.deepEqual(report.projects.map((p) => [p.projectId, p.requests, mj(p.joules)]), [['load', 500, expectedMj]]);
    }
  });

  it('answers ping false once closed instead of throwing', async (t) => {
    const store = await openHostedStore({ dataDir: tempDir(t) });
    await store.close();
    assert.equal(await store.ping(), false);
  });
});
