/**
 * What the shape of the evidence id costs the ledger: rows inserted into the embedded store's real
 * schema (migrations, indexes and the usage-counter trigger, from openHostedStore) with random
 * evidence ids (`newId`, as before 2026-11-27) and with time-ordered ones (`newTimeOrderedId`,
 * what svc hosted uses), side by side, in transactions of 1, 8 and 32 rows (the ledger writer
 * thread's group commits under load), after the ledger holds `--prefill` rows.
 *
 * The evidence id is the ledger's primary key. A random key puts every new row in a random leaf
 * of the key's B-tree, so a commit of k rows rewrites about k leaf pages into the WAL (and, once
 * the index outgrows the page cache, reads them first); time-ordered keys land on the rightmost
 * leaf. Reported per row: wall and CPU time, and WAL frames (pages written) per commit.
 *
 * The insert is the store's own statement (insertLedgerQuery, compiled by Kysely without a
 * connection), run on one node:sqlite connection with the store's pragmas, as the writer thread
 * runs it. The rows are those of a request without an Idempotency-Key (no stored response).
 *
 * Usage: npm run bench:hosted-ledger-ids [-- --prefill 200000 --commits 2000 --batches 1,8,32 --json]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { HostedDatabase, LedgerRow } from '../src/accounts/store/hosted-database.ts';
import { insertLedgerQuery } from '../src/accounts/store/hot-path-queries.ts';
import { LEDGER_COLUMNS } from '../src/accounts/store/ledger-rows.ts';
import { openHostedStore } from '../src/accounts/store/open-hosted-store.ts';
import { sqliteConnectionPragmas } from '../src/accounts/store/sqlite-connection-settings.ts';
import { newId, newTimeOrderedId } from '../src/shared/new-id.ts';

const { values: flags } = parseArgs({
  options: {
    prefill: { type: 'string', default: '200000' },
    commits: { type: 'string', default: '2000' },
    batches: { type: 'string', default: '1,8,32' },
    json: { type: 'boolean', default: false },
  },
});
const PREFILL = Number(flags.prefill);
const COMMITS = Number(flags.commits);
const BATCHES = flags.batches.split(',').map(Number);
/** A WAL frame: a 24-byte header and a 4 KiB page. */
const FRAME_BYTES = 24 + 4096;

type Mode = 'random' | 'time-ordered';

/** Kysely for compiling only (its documented DummyDriver): the store's statements as SQLite text. */
const COMPILER = new Kysely<HostedDatabase>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

interface Result { mode: Mode; batch: number; wallMicrosPerRow: number; cpuMicrosPerRow: number; framesPerCommit: number }

async function measure(mode: Mode, batch: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ledger-ids-'));
  try {
    const store = await openHostedStore({ dataDir: dir });
    const account = await store.createAccount({ name: 'bench', plan: { monthlyJouleAllowance: 1e9, hostedEntitlement: true, enterprise: false } });
    const { key } = await store.issueKey(account.id, { scope: 'supercomputer', name: 'bench' });
    await store.close();

    const file = join(dir, 'hosted', 'hosted.db');
    const db = new DatabaseSync(file);
    db.exec(sqliteConnectionPragmas(5_000));
    const insert = db.prepare(insertLedgerQuery(COMPILER).sql);
    const template: LedgerRow = {
      evidence_id: '', account_id: account.id, key_id: key.id, project_id: null, idempotency_key: null, created_at: 0,
      month: '2026-11', day: '2026-11-27', execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'standard',
      model: 'bench-chat', provider: 'mock', latency_ms: 1.25, raw_mj: null, estimated_mj: 4140, billable_mj: 4140, fallback: 0,
      fallback_reason: null, outcome: 'completed', prompt_tokens: 9, completion_tokens: 6, response: null, route_key_id: key.id, reservation_id: null,
      signature_alg: null, signing_key_id: null, signature: null,
    };
    // One row a millisecond of simulated time: the time-ordered ids' prefix moves as it does in use.
    let now = Date.UTC(2026, 10, 1);
    const row = (): void => {
      now += 1;
      const values: LedgerRow = { ...template, evidence_id: mode === 'random' ? newId('ev_') : newTimeOrderedId('ev_', 16, now), created_at: now };
      insert.get(...LEDGER_COLUMNS.map((column) => values[column]));
    };
    db.exec('BEGIN');
    for (let i = 0; i < PREFILL; i++) {
      row();
      if (i % 10_000 === 9_999) db.exec('COMMIT; BEGIN');
    }
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');

    const cpuBefore = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let c = 0; c < COMMITS; c++) {
      db.exec('BEGIN');
      for (let i = 0; i < batch; i++) row();
      db.exec('COMMIT');
    }
    const wallNs = Number(process.hrtime.bigint() - start);
    const cpu = process.cpuUsage(cpuBefore);
    const walBytes = statSync(`${file}-wal`).size;
    db.close();
    const rows = COMMITS * batch;
    return {
      mode, batch, wallMicrosPerRow: wallNs / 1_000 / rows, cpuMicrosPerRow: (cpu.user + cpu.system) / rows,
      // The WAL only grows here (checkpoints are off): its size is every frame these commits wrote.
      framesPerCommit: (walBytes - 32) / FRAME_BYTES / COMMITS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Result[] = [];
for (const batch of BATCHES) {
  for (const mode of ['random', 'time-ordered'] as const) {
    process.stderr.write(`${mode}, ${batch} row${batch === 1 ? '' : 's'} a commit…\n`);
    results.push(await measure(mode, batch));
  }
}

if (flags.json) {
  console.log(JSON.stringify({ prefill: PREFILL, commits: COMMITS, results }, null, 2));
} else {
  console.log(`Machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores; Node ${process.version}; ledger prefilled with ${PREFILL} rows, ${COMMITS} commits per line.`);
  console.log('');
  console.log('| rows a commit | random ids: µs/row wall / CPU | WAL frames a commit | time-ordered ids: µs/row wall / CPU | WAL frames a commit | CPU ratio |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const batch of BATCHES) {
    const r = results.find((x) => x.batch === batch && x.mode === 'random')!;
    const o = results.find((x) => x.batch === batch && x.mode === 'time-ordered')!;
    console.log(`| ${batch} | ${r.wallMicrosPerRow.toFixed(1)} / ${r.cpuMicrosPerRow.toFixed(1)} | ${r.framesPerCommit.toFixed(1)} | ${o.wallMicrosPerRow.toFixed(1)} / ${o.cpuMicrosPerRow.toFixed(1)} | ${o.framesPerCommit.toFixed(1)} | ${(o.cpuMicrosPerRow / r.cpuMicrosPerRow).toFixed(2)} |`);
  }
}
