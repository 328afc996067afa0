/**
 * Solve jobs: what the queue costs, side by side with the same solves run directly.
 *
 * 1. Overhead per job: N short solves (grover pattern_search over 256 records, 8 qubits) called
 *    directly on a SolveService, one after another, against the same N submitted as jobs and
 *    awaited one after another: (a) in-process queue + SQLite store (the daemon's default),
 *    (b) BullMQ on Redis + PostgreSQL, run by one `svc worker` process. Median per solve.
 * 2. Enqueue→start latency at RATE jobs/s (open loop, DURATION s) through BullMQ with one and
 *    with two `svc worker` processes: started_at − created_at from the job store, p50 and p99.
 * 3. Throughput of short solves with one and with two workers: BURST jobs submitted at once,
 *    time until the last is finished; the ratio two/one.
 * Needs PostgreSQL and Redis (test/helpers/test-services.ts's addresses, or SVC_TEST_DATABASE_URL
 * and SVC_TEST_REDIS_URL). Usage: npm run bench:jobs [-- --n 50 --rate 100 --duration 5 --burst 300]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { solveJobsPrefix } from '../src/app/hosted-server.ts';
import { openSolveJobs, type OpenedSolveJobs } from '../src/quantum/jobs/open-solve-jobs.ts';
import { SolveService } from '../src/quantum/solve-service.ts';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const N = arg('n', 50);
const RATE = arg('rate', 100);
const DURATION_S = arg('duration', 5);
const BURST = arg('burst', 300);
const DATABASE_URL = process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = new URL('..', import.meta.url).pathname;

const body = (i: number) => ({
  solver: 'grover',
  problem: { type: 'pattern_search', dataset: Array.from({ length: 256 }, (_, k) => (k === i % 256 ? `id=${k} MATCH` : `id=${k} ok`)).join('\n'), target: { pattern: 'MATCH', min_confidence: 0.9 }, search_space_size: 256 },
  seed: i,
});

const median = (xs: number[]) => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Resolves when the job is finished (polled from the store every ms or so). */
async function finished(opened: OpenedSolveJobs, id: string): Promise<void> {
  for (;;) {
    const job = await opened.jobs.get(id, '');
    if (job.status === 'completed') return;
    if (job.status !== 'queued' && job.status !== 'running') throw new Error(`job ${id} ${job.status}: ${job.error}`);
    await delay(1);
  }
}

async function sequentialJobs(opened: OpenedSolveJobs): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    const { job } = await opened.jobs.submit(body(i), { owner: '' });
    await finished(opened, job.id);
    times.push(performance.now() - t);
  }
  return times;
}

function startWorker(schemaUrl: string, prefix: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'worker', '--redis-url', REDIS_URL, '--database-url', schemaUrl, '--redis-key-prefix', prefix, '--workers', '1', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    // At warn level the start line is not logged: the worker is ready once it is in Redis's liveness hash.
    createInterface({ input: child.stdout! }).on('line', () => undefined);
    child.once('exit', (code) => reject(new Error(`svc worker exited with ${code}`)));
    const redis = new Redis(REDIS_URL);
    const poll = async () => {
      for (;;) {
        const all = await redis.hgetall(`${solveJobsPrefix(prefix)}:solve-workers`);
        if (Object.values(all).some((t) => (JSON.parse(t) as { pid: number }).pid === child.pid)) break;
        await delay(50);
      }
      redis.disconnect();
      resolve(child);
    };
    void poll();
  });
}

async function main(): Promise<void> {
  console.log(`solve-jobs bench: ${cpus().length} CPUs (${cpus()[0]?.model}), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, N=${N}, rate=${RATE}/s for ${DURATION_S} s, burst=${BURST}`);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-jobs-'));
  const schema = `bench_jobs_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const schemaUrl = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const prefix = `b${randomBytes(4).toString('hex')}:rl:`;
  const workers: ChildProcess[] = [];
  const service = new SolveService({ workers: 1 });
  try {
    service.warm();
    // Direct: the same solves on the same pool, no queue, no store.
    for (let i = 0; i < 5; i++) await service.solve(body(i));
    const direct: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await service.solve(body(i));
      direct.push(performance.now() - t);
    }
    const local = await openSolveJobs({ service, sqlitePath: join(dir, 'solve-jobs.db'), concurrency: 1 });
    const inProcess = await sequentialJobs(local);
    await local.close();

    const gateway = await openSolveJobs({ service, sqlitePath: '', databaseUrl: schemaUrl, redisUrl: REDIS_URL, redisKeyPrefix: solveJobsPrefix(prefix), runJobs: false });
    workers.push(await startWorker(schemaUrl, prefix));
    await sequentialJobs(gateway); // warm-up of the worker's threads and connections
    const bull = await sequentialJobs(gateway);
    console.log('\n1. One short solve (grover, 256 records), median ms per solve, submitted and awaited one at a time');
    console.log('| path | median ms | overhead vs direct |');
    console.log('|---|---|---|');
    const d = median(direct);
    console.log(`| direct (SolveService.solve) | ${d.toFixed(2)} | - |`);
    console.log(`| job: in-process queue + SQLite | ${median(inProcess).toFixed(2)} | +${(median(inProcess) - d).toFixed(2)} ms |`);
    console.log(`| job: BullMQ + PostgreSQL, svc worker | ${median(bull).toFixed(2)} | +${(median(bull) - d).toFixed(2)} ms |`);

    const pool = new pg.Pool({ connectionString: schemaUrl, max: 2 });
    const latencies = async (): Promise<{ p50: number; p99: number; jobs: number }> => {
      const ids: string[] = [];
      const total = RATE * DURATION_S;
      const start = performance.now();
      for (let i = 0; i < total; i++) {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await delay(wait);
        void gateway.jobs.submit(body(i), { owner: '' }).then(({ job }) => ids.push(job.id));
      }
      for (;;) {
        const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM solve_jobs WHERE status = 'completed' AND id = ANY($1)`, [ids]);
        if (Number(rows[0]!.n) === total && ids.length === total) break;
        await delay(100);
      }
      const { rows } = await pool.query<{ wait: string }>('SELECT started_at - created_at AS wait FROM solve_jobs WHERE id = ANY($1)', [ids]);
      const waits = rows.map((r) => Number(r.wait));
      return { p50: quantile(waits, 0.5), p99: quantile(waits, 0.99), jobs: waits.length };
    };
    const burst = async (): Promise<number> => {
      const t = performance.now();
      const ids = await Promise.all(Array.from({ length: BURST }, async (_, i) => (await gateway.jobs.submit(body(i), { owner: '' })).job.id));
      for (;;) {
        const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM solve_jobs WHERE status = 'completed' AND id = ANY($1)`, [ids]);
        if (Number(rows[0]!.n) === BURST) break;
        await delay(50);
      }
      return BURST / ((performance.now() - t) / 1000);
    };
    const one = { latency: await latencies(), throughput: await burst() };
    workers.push(await startWorker(schemaUrl, prefix));
    const two = { latency: await latencies(), throughput: await burst() };
    console.log(`\n2. Enqueue→start latency at ${RATE} jobs/s for ${DURATION_S} s (BullMQ + PostgreSQL), and 3. throughput of ${BURST} short solves submitted at once`);
    console.log('| svc worker processes (1 thread each) | enqueue→start p50 ms | p99 ms | jobs/s | ratio |');
    console.log('|---|---|---|---|---|');
    console.log(`| 1 | ${one.latency.p50} | ${one.latency.p99} | ${one.throughput.toFixed(1)} | 1.00 |`);
    console.log(`| 2 | ${two.latency.p50} | ${two.latency.p99} | ${two.throughput.toFixed(1)} | ${(two.throughput / one.throughput).toFixed(2)} |`);
    await pool.end();
    await gateway.close();
  } finally {
    for (const w of workers) {
      w.kill('SIGTERM');
      await new Promise((r) => (w.exitCode === null ? w.once('exit', r) : r(null)));
    }
    await service.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${solveJobsPrefix(prefix)}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
