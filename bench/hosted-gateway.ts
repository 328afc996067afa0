/**
 * The hosted tier's gateway overhead: the same non-streamed chat request sent to a fast local
 * mock upstream directly, through `svc hosted` (every request authenticated with a key, routed,
 * metered in Joules and written to the ledger with its evidence), and through Portkey's open
 * source gateway (`@portkey-ai/gateway`, no auth, no ledger) on the same mock, in the same run.
 * A fourth side, the floor (bench/floor-proxy.ts: a bare Fastify route forwarding over undici, no
 * work at all), shows what one more HTTP hop through Node costs on this machine: no gateway's
 * added latency here can be lower.
 *
 * Closed-loop load comes from autocannon in this process, after a second of unrecorded warm-up
 * at the same connection count; latencies are taken from its per-response timer (float
 * milliseconds; its own histogram rounds to whole ms). Per connection
 * count (1, 64, 256) the sides take turns, `--rounds` times; reported are medians over
 * rounds of p50, p99 and requests/s, and the added latency (side − direct). A last scenario holds
 * 1,000 requests/s (64 connections) on every side: the goal's condition (p50 added ≤ 0.5 ms,
 * p99 ≤ 2 ms). That row is driven by open-loop-load.ts, not autocannon: its `overallRate` sends
 * each second's quota in a burst, which gave even the direct side a p99 of 25–33 ms. Requests go
 * out evenly spaced (start + i / rate) over undici keep-alive connections after 0.5 s of unrecorded
 * warm-up; its p50 / p99 are from each send to the end of its body, and the line under the table
 * gives the p99 from each request's intended send time (wrk2's coordinated-omission correction).
 *
 * Everything shares this machine's cores: the load generator, the mock, and the gateway. So
 * beside latency the bench reports each gateway process's CPU time per request (from /proc, all
 * its threads, warm-up included), which another process's load moves far less.
 *
 * `--baseline <dir>` adds a side `svc-before`: `svc hosted` from another checkout (a git worktree
 * of an earlier commit, its node_modules linked), set up by that checkout's own store code, so a
 * change is measured against the code before it in the same run. `--database-url <postgres url>`
 * runs every svc side on PostgreSQL (a schema of its own, dropped at the end) instead of the
 * embedded store.
 *
 * Usage: npm run bench:hosted [-- --seconds 5 --rounds 2 --connections 1,64,256 --rate 1000
 *        --sides direct,floor,portkey,svc --baseline <dir> --json]; SVC_BENCH_CPU_PROF=<dir> profiles svc hosted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { openLoop } from './open-loop-load.ts';
import { openHostedStore } from '../src/accounts/store/open-hosted-store.ts';
import { freePort } from '../test/helpers/free-port.ts';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1,64,256' },
    rate: { type: 'string', default: '1000' },
    sides: { type: 'string', default: 'direct,floor,portkey,svc' },
    baseline: { type: 'string' },
    'database-url': { type: 'string' },
    'database-pool-size': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(flags.seconds);
const ROUNDS = Number(flags.rounds);
const CONNECTIONS = flags.connections === '' ? [] : flags.connections.split(',').map(Number);
const RATE = Number(flags.rate);
const SIDES = flags.sides.split(',');
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODEL = 'bench-chat';

const log = (line: string): void => { if (!flags.json) console.log(line); };
const progress = (line: string): void => { process.stderr.write(`${line}\n`); };

/** An OpenAI-shaped upstream that answers every chat at once (the model's time is not measured). */
async function startMock(): Promise<{ url: string; server: Server }> {
  const reply = JSON.stringify({
    id: 'chatcmpl-mock', object: 'chat.completion', created: 1, model: 'mock',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the mock upstream.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 },
  });
  const models = JSON.stringify({ object: 'list', data: [{ id: 'mock', object: 'model', created: 1, owned_by: 'mock' }] });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/models') === true) res.writeHead(200, { 'content-type': 'application/json' }).end(models);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function waitFor(url: string, init: RequestInit, child: ChildProcess, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      const response = await fetch(url, init);
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} did not answer within 30 s`);
}

interface Side {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The gateway's process, for its CPU time per request (none for the direct side: the mock is in this process). */
  pid?: number | undefined;
  stop(): Promise<void>;
}

/**
 * CPU time a process has used, all its threads, in microseconds (Linux /proc; undefined
 * elsewhere). Divided by the requests a run completed it is the gateway's cost per request,
 * which moves far less than latency on a shared machine.
 */
function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime (fields 14 and 15 of the line, in clock ticks of 1/100 s on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

async function startPortkey(mockUrl: string): Promise<Side> {
  const port = await freePort();
  const entry = createRequire(import.meta.url).resolve('@portkey-ai/gateway/build/start-server.js');
  const child = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], { stdio: 'ignore', env: { ...process.env, NODE_ENV: 'production' } });
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-mock', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mockUrl}/v1` };
  await waitFor(url, { method: 'POST', headers, body: body() }, child, 'portkey');
  return { name: 'portkey', url, headers, pid: child.pid, stop: async () => { child.kill('SIGTERM'); } };
}

async function startFloor(mockUrl: string): Promise<Side> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bench/floor-proxy.ts'), mockUrl, String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-mock' };
  await waitFor(url, { method: 'POST', headers, body: body() }, child, 'floor proxy');
  return { name: 'floor', url, headers, pid: child.pid, stop: async () => { child.kill('SIGTERM'); } };
}

/** A file of the accounts room in a checkout: src/accounts/ since the house redesign, src/hosted/ before it. */
function checkoutFile(root: string, path: string): string {
  const found = ['src/accounts', 'src/hosted'].map((room) => join(root, room, path)).find((file) => existsSync(file));
  if (found === undefined) throw new Error(`${root}: no ${path} where a checkout of svc keeps it`);
  return found;
}

async function startSvc(mockUrl: string, root = ROOT, name = 'svc'): Promise<Side> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-hosted-'));
  // The checkout's own store code: its schema is the one its server expects.
  const storeModule = checkoutFile(root, 'store/open-hosted-store.ts');
  const open = root === ROOT ? openHostedStore : (await import(storeModule) as { openHostedStore: typeof openHostedStore }).openHostedStore;
  const databaseUrl = flags['database-url'];
  const schema = databaseUrl === undefined ? undefined : `svc_bench_${name.replace(/\W/g, '_')}_${process.pid}`;
  const store = await open({ dataDir, ...(databaseUrl !== undefined ? { databaseUrl, schema } : {}) });
  const account = await store.createAccount({ name: 'bench', plan: { monthlyJouleAllowance: 1e12, hostedEntitlement: true, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'supercomputer', name: 'bench' });
  await store.close();
  const routes = join(dataDir, 'routes.json');
  writeFileSync(routes, JSON.stringify({
    default_policy: 'supercomputer-fast',
    models: [{ id: MODEL, family: 'chat' }],
    backends: [{
      id: 'mock', kind: 'upstream', upstream: { base_url: `${mockUrl}/v1`, kind: 'local', discover: false, models: ['mock'] },
      sharing: 'dedicated', execution_plane: 'supercomputer', models: { [MODEL]: 'mock' },
      energy: { joules_per_prompt_token: 0.06, joules_per_completion_token: 0.6, joules_per_second: 2 }, provider: 'mock',
    }],
    routes: [
      { policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['mock'] },
      { policy: 'supercomputer-deep', queue_class: 'deep', backends: ['mock'] },
    ],
    // One key sends everything: the backstop's numbers are raised so they do not shape the
    // measurement (each request is still taken from both buckets).
    limits: {
      key: { requests_per_second: 1_000_000, burst: 1_000_000 },
      // A baseline from before the account bucket existed refuses the field (its schema is strict).
      ...(readFileSync(checkoutFile(root, 'limits/limits-config.ts'), 'utf8').includes('account:') ? { account: { requests_per_second: 1_000_000, burst: 1_000_000 } } : {}),
      queue_classes: { interactive: { requests_per_second: 1_000_000, burst: 1_000_000 } },
    },
  }));
  const port = await freePort();
  // SVC_BENCH_CPU_PROF=<dir>: svc hosted writes a V8 CPU profile there when it stops.
  const profile = process.env.SVC_BENCH_CPU_PROF;
  const child = spawn(process.execPath, [...(profile !== undefined ? ['--cpu-prof', '--cpu-prof-dir', profile] : []), join(root, 'src/cli/main.ts'), 'hosted', '--port', String(port), '--data-dir', dataDir, '--routes', routes, '--log-level', 'warn',
    ...(databaseUrl !== undefined ? ['--database-url', `${databaseUrl}?options=${encodeURIComponent(`-c search_path=${schema!}`)}`] : []),
    // A baseline from before the option existed keeps its own pool size.
    ...(flags['database-pool-size'] !== undefined && root === ROOT ? ['--database-pool-size', flags['database-pool-size']] : [])], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/api/v1/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${secret}` };
  await waitFor(url, { method: 'POST', headers, body: body() }, child, name);
  return {
    name, url, headers, pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl !== undefined) {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query(`drop schema if exists ${schema!} cascade`).finally(() => client.end());
      }
    },
  };
}

function body(): string {
  return JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });
}

interface Run {
  p50: number; p99: number; rps: number; errors: number; non2xx: number;
  /** The gateway process's CPU time per completed request, µs (svc and Portkey on Linux). */
  cpuPerRequest?: number | undefined;
  /** Held-rate runs only: from the intended send time, and the generator's own lateness. */
  corrected?: { p50: number; p99: number; sendLagP99: number; maxInFlight: number };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** CPU µs per request over a run and its warm-up (every request the gateway answered). */
function perRequest(cpuBefore: number | undefined, cpuAfter: number | undefined, requests: number): number | undefined {
  return cpuBefore === undefined || cpuAfter === undefined || requests === 0 ? undefined : (cpuAfter - cpuBefore) / requests;
}

async function load(side: Side, connections: number, rate?: number): Promise<Run> {
  const cpuBefore = cpuMicros(side.pid);
  if (rate !== undefined) {
    const warmupSeconds = 0.5;
    const run = await openLoop({ url: side.url, method: 'POST', headers: side.headers, body: body(), connections, rate, seconds: SECONDS, warmupSeconds });
    return {
      p50: percentile(run.fromSend, 0.5), p99: percentile(run.fromSend, 0.99), rps: run.rps, errors: run.errors, non2xx: run.non2xx,
      cpuPerRequest: perRequest(cpuBefore, cpuMicros(side.pid), run.sent + Math.round(warmupSeconds * rate)),
      corrected: { p50: percentile(run.fromIntended, 0.5), p99: percentile(run.fromIntended, 0.99), sendLagP99: percentile(run.sendLag, 0.99), maxInFlight: run.maxInFlight },
    };
  }
  const times: number[] = [];
  // Called without a callback, autocannon returns its instance: a promise of the result that is
  // also an event emitter (its types only declare the promise).
  // A second of unrecorded warm-up at the same connection count first (autocannon's own, on
  // connections of its own): the gateway's upstream pool and JIT reach the load's steady state,
  // so p99 measures it rather than the first burst of new connections (which at 256 connections
  // made seconds-long tails on every gateway).
  // (`warmup` is autocannon's documented option; its bundled types leave it out.)
  const options: autocannon.Options & { warmup: { connections: number; duration: number } } = {
    url: side.url, method: 'POST', headers: side.headers, body: body(), connections, duration: SECONDS, warmup: { connections, duration: 1 },
  };
  const instance = autocannon(options) as Promise<autocannon.Result> & { on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): void };
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === 200) times.push(responseTime);
  });
  const result = await instance;
  const warmupRequests = (result as autocannon.Result & { warmup?: autocannon.Result }).warmup?.requests.total ?? 0;
  const cpuPerRequest = perRequest(cpuBefore, cpuMicros(side.pid), result.requests.total + warmupRequests);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), rps: times.length / SECONDS, errors: result.errors + result.timeouts, non2xx: result.non2xx, cpuPerRequest };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const mock = await startMock();
const direct: Side = { name: 'direct', url: `${mock.url}/v1/chat/completions`, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mock' }, stop: async () => {} };
const sides: Side[] = [];
if (SIDES.includes('direct')) sides.push(direct);
progress('starting the gateways…');
if (SIDES.includes('floor')) sides.push(await startFloor(mock.url));
if (SIDES.includes('portkey')) sides.push(await startPortkey(mock.url));
if (SIDES.includes('svc')) sides.push(await startSvc(mock.url));
if (flags.baseline !== undefined) sides.push(await startSvc(mock.url, flags.baseline, 'svc-before'));

const load0 = loadavg().map((l) => l.toFixed(2)).join(' ');
const scenarios: { label: string; connections: number; rate?: number }[] = [
  ...CONNECTIONS.map((c) => ({ label: `${c} connection${c === 1 ? '' : 's'}`, connections: c })),
  ...(RATE > 0 ? [{ label: `${RATE} req/s (64 connections)`, connections: 64, rate: RATE }] : []),
];
const results = new Map<string, Map<string, Run[]>>();
for (const scenario of scenarios) {
  const bySide = new Map<string, Run[]>();
  results.set(scenario.label, bySide);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so no side always runs on a warmer (or more tired) machine.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      progress(`${scenario.label}: ${side.name}, round ${round + 1}/${ROUNDS}`);
      const run = await load(side, scenario.connections, scenario.rate);
      const runs = bySide.get(side.name) ?? [];
      runs.push(run);
      bySide.set(side.name, runs);
    }
  }
}
for (const side of sides) await side.stop();
await new Promise<void>((resolve) => mock.server.close(() => resolve()));

const summary = [...results].map(([label, bySide]) => {
  const of = (name: string) => {
    const runs = bySide.get(name);
    if (runs === undefined) return undefined;
    const held = runs.flatMap((r) => (r.corrected === undefined ? [] : [r.corrected]));
    return {
      p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)), rps: median(runs.map((r) => r.rps)), failures: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
      ...(runs.every((r) => r.cpuPerRequest !== undefined) ? { cpuPerRequest: median(runs.map((r) => r.cpuPerRequest!)) } : {}),
      ...(held.length === 0 ? {} : {
        correctedP50: median(held.map((c) => c.p50)), correctedP99: median(held.map((c) => c.p99)),
        sendLagP99: median(held.map((c) => c.sendLagP99)), maxInFlight: Math.max(...held.map((c) => c.maxInFlight)),
      }),
    };
  };
  return { label, direct: of('direct'), floor: of('floor'), portkey: of('portkey'), svc: of('svc'), svcBefore: of('svc-before') };
});

if (flags.json) {
  console.log(JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, load: load0, summary }, null, 2));
} else {
  log(`Machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, load ${load0} → ${loadavg().map((l) => l.toFixed(2)).join(' ')}; Node ${process.version}`);
  log(`${SECONDS} s per run, median of ${ROUNDS} rounds; latency in ms; added = side − direct. svc authenticates, routes, meters and ledgers every request.`);
  log('');
  log('| load | direct p50 / p99 | direct req/s | floor added p50 / p99 | floor req/s | svc added p50 / p99 | svc req/s | Portkey added p50 / p99 | Portkey req/s | failures floor / svc / Portkey |');
  log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const f = (n: number | undefined, digits = 2) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits));
  for (const row of summary) {
    const d = row.direct;
    const added = (s: typeof d) => (s === undefined || d === undefined ? '—' : `**${f(s.p50 - d.p50)}** / ${f(s.p99 - d.p99)}`);
    log(`| ${row.label} | ${f(d?.p50)} / ${f(d?.p99)} | ${f(d?.rps, 0)} | ${added(row.floor)} | ${f(row.floor?.rps, 0)} | ${added(row.svc)} | ${f(row.svc?.rps, 0)} | ${added(row.portkey)} | ${f(row.portkey?.rps, 0)} | ${row.floor?.failures ?? '—'} / ${row.svc?.failures ?? '—'} / ${row.portkey?.failures ?? '—'} |`);
  }
  const cpu = summary.flatMap((row) => {
    const of = (name: 'floor' | 'svc' | 'portkey') => (row[name]?.cpuPerRequest === undefined ? [] : [`${name} ${f(row[name]!.cpuPerRequest, 0)}`]);
    const parts = [...of('floor'), ...of('svc'), ...of('portkey')];
    return parts.length === 0 ? [] : [`${row.label}: ${parts.join(', ')}`];
  });
  if (cpu.length > 0) log(`\nGateway CPU time per request, µs (all its threads, warm-up included): ${cpu.join('; ')}.`);
  if (flags.baseline !== undefined) {
    log('\n| load | svc req/s | svc-before req/s | ratio | svc p50 / p99 | svc-before p50 / p99 | svc / svc-before CPU µs per request |');
    log('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of summary) {
      const now = row.svc;
      const before = row.svcBefore;
      if (now === undefined || before === undefined) continue;
      log(`| ${row.label} | ${f(now.rps, 0)} | ${f(before.rps, 0)} | **${f(now.rps / before.rps)}** | ${f(now.p50)} / ${f(now.p99)} | ${f(before.p50)} / ${f(before.p99)} | ${f(now.cpuPerRequest, 0)} / ${f(before.cpuPerRequest, 0)} |`);
    }
  }
  for (const row of summary) {
    const held = (['direct', 'floor', 'svc', 'portkey'] as const).flatMap((name) => {
      const s = row[name];
      return s?.correctedP99 === undefined ? [] : [`${name} ${f(s.correctedP99)} (generator late by ≤ ${f(s.sendLagP99)} at p99, ≤ ${s.maxInFlight} in flight)`];
    });
    if (held.length > 0) log(`\n${row.label}, open loop: p99 from the intended send time (coordinated omission corrected): ${held.join('; ')}.`);
  }
}
