/**
 * What `--pqc-transport` costs: the same requests to three `svc serve` daemons side by side,
 *
 *  1. plain HTTP (the default);
 *  2. `--pqc-transport ml-kem-768`: TLS 1.3, X25519MLKEM768 key exchange, an ECDSA certificate;
 *  3. `--pqc-transport ml-kem-768,ml-dsa-65`: the same with an ML-DSA-65 certificate; health
 *     answers (and any the client asks for) signed (RFC 9421) with ML-DSA-65.
 *
 * Workloads, each run in short slices that take turns across the three (so a busy machine
 * weighs on all alike):
 *  - `/v1/models` over kept-alive connections, `--concurrency` requests in flight (never signed
 *    unless the client sends Accept-Signature: the cost of TLS alone);
 *  - `/health` the same way (signed with ML-DSA-65 on the third daemon: the cost of a signature);
 *  - `/health` on a new connection per request (the handshake: ML-KEM encapsulation and, for
 *    the ML-DSA certificate, its verification by the client);
 *  - a chat completion on the fixture model (8 tokens, one at a time, kept alive; unsigned).
 * Reported: requests/s, p50 and p99 latency, and each as a ratio to plain HTTP.
 *
 * Usage: npm run bench:transport [-- --seconds 2 --slices 5 --concurrency 8 --json]
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startDaemon, type DaemonProcess } from '../test/helpers/daemon-process.ts';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    slices: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
  },
});
const SLICE_MS = Number(flags.seconds) * 1000;
const SLICES = Number(flags.slices);
const CONCURRENCY = Number(flags.concurrency);
const log = (line: string): void => { if (!flags.json) console.log(line); };
const progress = (line: string): void => { process.stderr.write(`${line}\n`); };

interface Target {
  name: string;
  daemon: DaemonProcess;
  /** One request; resolves with the status once the body is read. */
  send(path: string, body: string | undefined, fresh: boolean): Promise<number>;
  close(): void;
}

function drain(res: IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    res.on('data', () => {});
    res.on('end', () => resolve(res.statusCode ?? 0));
    res.on('error', reject);
  });
}

async function target(name: string, args: string[]): Promise<Target> {
  const daemon = await startDaemon({ args: ['--host', '127.0.0.1', ...args] });
  const https = daemon.url.startsWith('https:');
  const ca = https ? readFileSync(`${daemon.dataDir}/transport/${args.some((a) => a.includes('ml-dsa')) ? 'identity-ml-dsa-65.crt' : 'identity-ecdsa-p256.crt'}`, 'utf8') : undefined;
  const kept = https ? new HttpsAgent({ keepAlive: true, maxSockets: CONCURRENCY, ca }) : new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
  const send = (path: string, body: string | undefined, fresh: boolean): Promise<number> => new Promise((resolve, reject) => {
    const options = {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      // A new connection per request: no agent, no TLS session resumption.
      ...(fresh ? { agent: false as const, ...(ca === undefined ? {} : { ca }) } : { agent: kept }),
    };
    const req = (https ? httpsRequest : httpRequest)(new URL(path, daemon.url), options, (res) => { drain(res).then(resolve, reject); });
    req.on('error', reject);
    req.end(body);
  });
  return { name, daemon, send, close: () => kept.destroy() };
}

interface Figures { requests: number; seconds: number; latencies: number[] }

/** `concurrency` loops sending for `ms`; every latency kept. */
async function slice(t: Target, path: string, body: string | undefined, fresh: boolean, concurrency: number, ms: number, into: Figures): Promise<void> {
  const until = performance.now() + ms;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      const at = performance.now();
      const status = await t.send(path, body, fresh);
      if (status !== 200) throw new Error(`${t.name} ${path}: status ${status}`);
      into.latencies.push(performance.now() - at);
      into.requests++;
    }
  }));
  into.seconds += (performance.now() - started) / 1000;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const targets = [
  await target('plain HTTP', []),
  await target('PQC TLS (ml-kem-768, ECDSA cert)', ['--pqc-transport', 'ml-kem-768']),
  await target('PQC TLS + ML-DSA-65 (cert, signed health)', ['--pqc-transport', 'ml-kem-768,ml-dsa-65']),
];
const chat = JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 8, temperature: 0 });
const workloads = [
  // Unsigned unless asked for (Accept-Signature): what TLS itself costs.
  { name: `/v1/models, kept alive, ${CONCURRENCY} in flight`, path: '/v1/models', body: undefined, fresh: false, concurrency: CONCURRENCY },
  // Signed always with ML-DSA: what a signature costs.
  { name: `/health, kept alive, ${CONCURRENCY} in flight`, path: '/health', body: undefined, fresh: false, concurrency: CONCURRENCY },
  { name: '/health, a new connection per request, 1 in flight', path: '/health', body: undefined, fresh: true, concurrency: 1 },
  { name: 'chat completion (fixture model, 8 tokens), kept alive, 1 in flight', path: '/v1/chat/completions', body: chat, fresh: false, concurrency: 1 },
];

const results: Record<string, unknown>[] = [];
try {
  // Warm-up: the model loads, connections open, JIT settles.
  for (const t of targets) for (const w of workloads) await slice(t, w.path, w.body, w.fresh, w.concurrency, 300, { requests: 0, seconds: 0, latencies: [] });
  log(`svc transport bench: ${SLICES} slices of ${SLICE_MS / 1000} s per daemon and workload, taking turns; ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const w of workloads) {
    const figures = new Map(targets.map((t) => [t.name, { requests: 0, seconds: 0, latencies: [] } as Figures]));
    for (let s = 0; s < SLICES; s++) {
      // The order rotates each slice.
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + s) % targets.length]!;
        await slice(t, w.path, w.body, w.fresh, w.concurrency, SLICE_MS, figures.get(t.name)!);
      }
      progress(`${w.name}: slice ${s + 1}/${SLICES}`);
    }
    log(`\n${w.name}`);
    log(`  ${'daemon'.padEnd(46)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}   vs plain: req/s  p50`);
    let plain: { rps: number; p50: number } | undefined;
    for (const t of targets) {
      const f = figures.get(t.name)!;
      const sorted = [...f.latencies].sort((a, b) => a - b);
      const rps = f.requests / f.seconds;
      const p50 = quantile(sorted, 0.5);
      const p99 = quantile(sorted, 0.99);
      plain ??= { rps, p50 };
      const ratio = { rps: rps / plain.rps, p50: p50 / plain.p50 };
      results.push({ workload: w.name, daemon: t.name, requests: f.requests, rps, p50_ms: p50, p99_ms: p99, rps_vs_plain: ratio.rps, p50_vs_plain: ratio.p50 });
      log(`  ${t.name.padEnd(46)} ${rps.toFixed(0).padStart(8)} ${p50.toFixed(2).padStart(8)} ${p99.toFixed(2).padStart(8)}   ${ratio.rps.toFixed(2).padStart(11)}× ${ratio.p50.toFixed(2).padStart(5)}×`);
    }
  }
  if (flags.json) console.log(JSON.stringify({ cpus: availableParallelism(), loadavg: loadavg(), slices: SLICES, slice_seconds: SLICE_MS / 1000, concurrency: CONCURRENCY, results }, null, 2));
} finally {
  for (const t of targets) {
    t.close();
    await t.daemon.stop();
  }
}
