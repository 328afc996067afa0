/**
 * What the hosted store costs a request: checkKey (one indexed query) and recordCharge (one
 * transaction: ledger insert + counter upsert), one at a time, on embedded SQLite in a temp dir
 * and on the machine's PostgreSQL in a fresh schema (dropped afterwards). Reports p50/p99 in ms.
 *
 * Usage: npm run bench:hosted-store [-- --rounds 2000 --json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { HostedStore } from '../src/accounts/hosted-store.ts';
import type { ChargeInput } from '../src/accounts/ledger-store.ts';
import { openHostedStore } from '../src/accounts/store/open-hosted-store.ts';
import { newId } from '../src/shared/new-id.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '200' },
    'database-url': { type: 'string', default: process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    json: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const WARMUP = Number(flags.warmup);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function time(rounds: number, fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

function charge(accountId: string, keyId: string, i: number): ChargeInput {
  const evidenceId = newId('ev_');
  return {
    evidenceId, accountId, keyId, projectId: 'bench', idempotencyKey: `bench-${i}-${evidenceId}`, promptTokens: 20, completionTokens: 40,
    outcome: 'completed', response: { id: 'chatcmpl-bench', choices: [{ message: { role: 'assistant', content: 'hello' } }] },
    route: {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'svc-fast', provider: 'mock',
      latency_ms: 3.2, raw_joules: null, estimated_joules: 0.123, billable_joules: 0.123, fallback: false, fallback_reason: null, evidence_id: evidenceId,
    },
  };
}

async function measure(store: HostedStore): Promise<Record<string, { p50: number; p99: number }>> {
  const account = await store.createAccount({ name: 'bench', plan: { monthlyJouleAllowance: 1e9, hostedEntitlement: true, enterprise: false } });
  const { key, secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
  // A realistic table: other accounts' keys in the index.
  for (let i = 0; i < 200; i++) await store.issueKey(account.id, { scope: 'developer_runtime' });
  await time(WARMUP, () => store.checkKey(secret));
  await time(WARMUP, (i) => store.recordCharge(charge(account.id, key.id, -i - 1)));
  return {
    checkKey: await time(ROUNDS, () => store.checkKey(secret)),
    recordCharge: await time(ROUNDS, (i) => store.recordCharge(charge(account.id, key.id, i))),
    allowance: await time(ROUNDS, () => store.allowance(account.id)),
  };
}

const results: Record<string, Record<string, { p50: number; p99: number }>> = {};

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-hosted-store-'));
try {
  const sqlite = await openHostedStore({ dataDir });
  results.sqlite = await measure(sqlite);
  await sqlite.close();

  const schema = `bench_store_${randomBytes(6).toString('hex')}`;
  const postgres = await openHostedStore({ dataDir, databaseUrl: flags['database-url'], schema });
  try {
    results.postgres = await measure(postgres);
  } finally {
    await postgres.close();
    const client = new pg.Client({ connectionString: flags['database-url'] });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

if (flags.json) {
  console.log(JSON.stringify({ rounds: ROUNDS, cpu: cpus()[0]?.model, results }, null, 2));
} else {
  console.log(`hosted store, ${ROUNDS} sequential calls each (${cpus().length} x ${cpus()[0]?.model ?? 'cpu'})`);
  console.log('store      operation      p50 ms   p99 ms');
  for (const [store, ops] of Object.entries(results)) {
    for (const [op, { p50, p99 }] of Object.entries(ops)) {
      console.log(`${store.padEnd(10)} ${op.padEnd(13)} ${p50.toFixed(3).padStart(7)}  ${p99.toFixed(3).padStart(7)}`);
    }
  }
}
