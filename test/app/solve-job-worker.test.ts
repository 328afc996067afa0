/**
 * Solve jobs beyond one machine, on real parts: `svc hosted` gateways and `svc worker` processes
 * as separate processes, sharing the machine's PostgreSQL (a fresh schema per test) and Redis (a
 * fresh key prefix per test). Processes are killed with SIGKILL, as a crash or an OOM kill would.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { solveJobsPrefix } from '../../src/app/hosted-server.ts';
import type { WorkerRecord } from '../../src/quantum/jobs/bullmq-job-queue.ts';
import { runCli, startServerProcess } from '../helpers/daemon-process.ts';
import { freshPostgresSchema } from '../helpers/hosted-stores.ts';
import { startMockQuantumProvider } from '../helpers/mock-quantum-provider.ts';
import { namespacesUnavailable, nodeHost, type NodeHost } from '../helpers/network-namespaces.ts';
import { postgresUnavailable, redisUnavailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/test-services.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { patternProblem, portfolioOf } from '../quantum/fixtures.ts';

const NO_POSTGRES = await postgresUnavailable('the solve-job scale-out tests');
const skip = NO_POSTGRES !== false ? NO_POSTGRES : await redisUnavailable('the solve-job scale-out tests');

interface Cluster {
  databaseUrl: string;
  redisPrefix: string;
  secret: string;
  redis: Redis;
  sql: pg.Client;
  gateway(extra?: string[], env?: Record<string, string>): Promise<{ url: string; kill: () => Promise<void> }>;
  /** A `svc worker`; with `host`, on that host of its own, reaching PostgreSQL and Redis over its link. */
  worker(host?: NodeHost): Promise<{ pid: number; kill: () => Promise<void> }>;
  workers(): Promise<WorkerRecord[]>;
}

async function cluster(t: TestContext, plan = { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false }): Promise<Cluster> {
  const { schema, drop } = freshPostgresSchema();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-jobs-cluster-'));
  const store = await openHostedStore({ dataDir, databaseUrl: TEST_DATABASE_URL, schema });
  const account = await store.createAccount({ name: 'jobs', plan });
  const { secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
  const databaseUrl = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const redisPrefix = `t${randomBytes(4).toString('hex')}:rl:`;
  const redis = new Redis(TEST_REDIS_URL);
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const stops: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const stop of stops.reverse()) await stop();
    const keys = await redis.keys(`${solveJobsPrefix(redisPrefix)}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await sql.end();
    await store.close();
    await drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const common = ['--database-url', databaseUrl, '--redis-url', TEST_REDIS_URL, '--redis-key-prefix', redisPrefix, '--job-lock', '2s'];
  return {
    databaseUrl, redisPrefix, secret, redis, sql,
    async gateway(extra = ['--no-local-solves'], env = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'svc-jobs-gateway-'));
      const gateway = await startServerProcess(['hosted', '--port', '0', '--data-dir', dir, ...common, ...extra], { env, onExit: () => rmSync(dir, { recursive: true, force: true }) });
      stops.push(() => gateway.stop());
      return { url: gateway.url, kill: async () => { await gateway.stop('SIGKILL'); } };
    },
    async worker(host?: NodeHost) {
      let args = common;
      if (host !== undefined) {
        // PostgreSQL and Redis listen on this host's loopback only: each is forwarded to the
        // near end of the worker's link, as a database host on the network would be.
        const pgForward = await forward(host.hostAddress, new URL(TEST_DATABASE_URL).port || '5432');
        const redisForward = await forward(host.hostAddress, new URL(TEST_REDIS_URL).port || '6379');
        stops.push(() => pgForward.close());
        stops.push(() => redisForward.close());
        const over = (url: string, port: number) => url.replace(/@?127\.0\.0\.1:\d+/, (m) => `${m.startsWith('@') ? '@' : ''}${host.hostAddress}:${port}`);
        args = ['--database-url', over(databaseUrl, pgForward.port), '--redis-url', over(TEST_REDIS_URL, redisForward.port), '--redis-key-prefix', redisPrefix, '--job-lock', '2s'];
      }
      const child = runCli(['worker', ...args, '--workers', '1'], {}, host?.wrap ?? []);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      stops.push(async () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); await exited; });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => { if (line.includes('svc worker taking solve jobs')) resolve(); });
        void exited.then((code) => reject(new Error(`svc worker exited with ${String(code)}: ${stderr}`)));
      });
      return { pid: child.pid!, kill: async () => { child.kill('SIGKILL'); await exited; } };
    },
    async workers() {
      const all = await redis.hgetall(`${solveJobsPrefix(redisPrefix)}:solve-workers`);
      return Object.values(all).map((text) => JSON.parse(text) as WorkerRecord);
    },
  };
}

/** A TCP forwarder on `address` (port chosen) to this host's loopback `port`. */
async function forward(address: string, port: string): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const upstream = connect(Number(port), '127.0.0.1');
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => { socket.destroy(); upstream.destroy(); });
      s.on('close', () => sockets.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

async function call(url: string, secret: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method, headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Polls the job through `url` until `done` holds (the test's timeout bounds it). */
async function until(url: string, secret: string, id: string, done: (job: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  let job: Record<string, unknown> = {};
  await waitFor(async () => done(job = (await call(url, secret, 'GET', `/api/solve/jobs/${id}`)).json), `job ${id}`, { attempts: 2400, pauseMs: 50 });
  return job;
}

const finished = (job: Record<string, unknown>) => ['completed', 'failed', 'cancelled'].includes(job.status as string);

async function workerKilledMidJob(t: TestContext, hosts: (NodeHost | undefined)[]): Promise<void> {
  const c = await cluster(t);
  const gateway = await c.gateway();
  const workers = [await c.worker(hosts[0]), await c.worker(hosts[1])];
  // The workers report liveness and capacity; the gateway's public descriptor shows them (no hosts or pids).
  let capacity = {} as { solve_jobs: { queue: string; local_solves: boolean; workers: { id: string; concurrency: number; running: number }[] }; live_queue_depth: null };
  await waitFor(async () => {
    capacity = await (await fetch(`${gateway.url}/api/v1/capacity`)).json() as typeof capacity;
    return capacity.solve_jobs.workers.length >= 2;
  }, 'both workers in the capacity descriptor', { attempts: 2400, pauseMs: 50 });
  assert.deepEqual([capacity.solve_jobs.queue, capacity.solve_jobs.local_solves, capacity.live_queue_depth], ['bullmq', false, null]);
  assert.deepEqual(capacity.solve_jobs.workers.map((w) => [w.concurrency, w.running, Object.keys(w).sort().join()]), [[1, 0, 'concurrency,id,running,seen_at,started_at'], [1, 0, 'concurrency,id,running,seen_at,started_at']]);
  const submitted = await call(gateway.url, c.secret, 'POST', '/api/solve/jobs', { solver: 'qubo', problem: portfolioOf(22, 7), shots: 65536, seed: 3 });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.json));
  const id = submitted.json.id as string;
  await until(gateway.url, c.secret, id, (job) => job.status === 'running');
  let busy: WorkerRecord | undefined;
  await waitFor(async () => (busy = (await c.workers()).find((w) => w.running > 0)) !== undefined, 'a worker running the job', { attempts: 6000, pauseMs: 20 });
  const victim = workers.find((w) => w.pid === busy!.pid)!;
  await victim.kill();
  const job = await until(gateway.url, c.secret, id, finished);
  assert.equal(job.status, 'completed', JSON.stringify(job));
  assert.equal(job.attempts, 2);
  assert.equal((job.result as { status: string }).status, 'completed');
  const rows = await c.sql.query('SELECT status, result FROM solve_jobs WHERE id = $1', [id]);
  assert.equal(rows.rowCount, 1);
  assert.equal(rows.rows[0].status, 'completed');
  // The survivor ran it: the only live worker left.
  assert.deepEqual((await c.workers()).filter((w) => w.pid !== victim.pid).length, 1);
}

test('a worker killed mid-job: the job completes on the other worker, with one result', { skip, timeout: 240_000 }, async (t) => {
  await workerKilledMidJob(t, [undefined, undefined]);
});

// The same on hosts of their own (a network namespace each, PostgreSQL and Redis reached over the link).
const NO_HOSTS = skip !== false ? skip : namespacesUnavailable('the solve-job workers on hosts of their own');
test('workers on hosts of their own: one killed mid-job, the job completes on the other, with one result', { skip: NO_HOSTS, timeout: 240_000 }, async (t) => {
  await workerKilledMidJob(t, [nodeHost(t), nodeHost(t)]);
});

test('a gateway killed after accepting jobs: nothing queued is lost, another gateway answers them', { skip, timeout: 240_000 }, async (t) => {
  const c = await cluster(t);
  const [a, b] = [await c.gateway(), await c.gateway()];
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await call(a.url, c.secret, 'POST', '/api/solve/jobs', { solver: 'grover', problem: patternProblem(16, i), seed: i });
    assert.equal(res.status, 202);
    ids.push(res.json.id as string);
  }
  await a.kill();
  // No worker ran anything yet: the jobs are only in Redis and PostgreSQL. A watcher on the other
  // gateway hears the worker's changes (BullMQ's events), though neither gateway runs the job.
  const response = await fetch(`${b.url}/api/solve/jobs/${ids[0]}/events`, { headers: { authorization: `Bearer ${c.secret}` } });
  const reader = response.body!.getReader();
  let text = '';
  // The stream is open (its first event sent) before any worker exists.
  while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  await c.worker();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
  const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  assert.equal(events[0], 'queued');
  assert.ok(events.includes('running'), text);
  assert.equal(events.at(-1), 'completed');
  for (const [i, id] of ids.entries()) {
    const job = await until(b.url, c.secret, id, finished);
    assert.equal(job.status, 'completed');
    assert.equal((job.result as { solution: { target_index: number } }).solution.target_index, i);
  }
});

test('a cancel through one gateway stops the job running on a worker', { skip, timeout: 240_000 }, async (t) => {
  const c = await cluster(t);
  const [a, b] = [await c.gateway(), await c.gateway()];
  await c.worker();
  const { json } = await call(a.url, c.secret, 'POST', '/api/solve/jobs', { solver: 'qubo', problem: portfolioOf(24, 9), shots: 65536 });
  const id = json.id as string;
  await until(b.url, c.secret, id, (job) => job.status === 'running');
  await waitFor(async () => (await c.workers()).some((w) => w.running > 0), 'the worker to run the job', { attempts: 6000, pauseMs: 20 });
  const cancelled = await call(b.url, c.secret, 'DELETE', `/api/solve/jobs/${id}`);
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.json.status, 'cancelled');
  // The worker's simulation stopped (its thread terminated): it runs nothing and takes the next job.
  await waitFor(async () => !(await c.workers()).some((w) => w.running > 0), 'the worker to stop the cancelled simulation', { attempts: 6000, pauseMs: 20 });
  const next = await call(a.url, c.secret, 'POST', '/api/solve/jobs', { solver: 'grover', problem: patternProblem(8, 3) });
  assert.equal((await until(b.url, c.secret, next.json.id as string, finished)).status, 'completed');
  assert.equal((await call(a.url, c.secret, 'GET', `/api/solve/jobs/${id}`)).json.status, 'cancelled');
});

test('one hardware lane across two gateways: the provider sees one job at a time', { skip, timeout: 240_000 }, async (t) => {
  const token = 'qtok-lane-test';
  const provider = await startMockQuantumProvider({ token, pollsBeforeDone: 6 });
  t.after(() => provider.close());
  const c = await cluster(t, { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: true });
  const hardware = ['--quantum-provider', provider.url, '--quantum-backend', 'ibm_brisbane', '--quantum-poll', '20ms'];
  const gateways = [await c.gateway(hardware, { SVC_QUANTUM_TOKEN: token }), await c.gateway(hardware, { SVC_QUANTUM_TOKEN: token })];
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await call(gateways[i % 2]!.url, c.secret, 'POST', '/api/solve/jobs', { solver: 'grover', problem: patternProblem(16, i + 1), substrate: 'vendor-eagle', seed: i });
    assert.equal(res.status, 202, JSON.stringify(res.json));
    ids.push(res.json.id as string);
  }
  for (const id of ids) assert.equal((await until(gateways[0]!.url, c.secret, id, finished)).status, 'completed');
  assert.equal(provider.jobs.length, 6);
  // No provider job was created before the previous one had finished.
  const spans = provider.jobs.map((j) => [j.created, j.finished ?? Infinity] as const).sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < spans.length; i++) assert.ok(spans[i]![0] >= spans[i - 1]![1], `provider jobs ${i - 1} and ${i} overlapped: ${JSON.stringify(spans)}`);
});
