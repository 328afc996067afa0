/**
 * Reliability under hostile input: the fuzz suite's generators (test/fuzz/hostile-requests.ts)
 * at a larger, bounded count against a real `svc serve` process, with large bodies (1–16 MB and
 * one over the limit) mixed in, while a worker thread times /health. Reports requests sent,
 * counts by status, what broke the rules (5xx other than 501/503, non-envelope errors, echoed
 * input, no reply), /health p50/p99/max, the daemon's own event-loop delay histogram and the
 * stalls over 50 ms it logged (with the requests in flight then), the daemon's RSS before, at its
 * peak, at the end and 10 s and 30 s after, and whether it lived.
 *
 * Usage: npm run bench:reliability [-- --requests 20000 --seconds 300 --concurrency 8 --seed N --json]
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { startDaemon } from '../test/helpers/daemon-process.ts';
import { rssMb } from '../test/helpers/large-bodies.ts';
import { exchangeViolations } from '../test/fuzz/envelope-violations.ts';
import { percentile, startHealthProbe } from '../test/fuzz/health-probe.ts';
import { BODY_ROUTES, FRAMING_CASES, bodyRouteRequest, framingRequest, getRouteRequest, unknownRouteRequest, type FramingCase, type HostileRequest } from '../test/fuzz/hostile-requests.ts';
import { rawExchange, type RawExchange } from '../test/fuzz/raw-exchange.ts';
import type { EventLoopHealth } from '../src/http/event-loop-monitor.ts';
import { endpointsOf, sendFraming, sendHostile, type Endpoint, type Sent } from '../test/fuzz/send-hostile.ts';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '8' },
    seed: { type: 'string', default: '20261123' },
    json: { type: 'boolean', default: false },
  },
});
const REQUESTS = Number(args.requests);
const MAX_MS = Number(args.seconds) * 1000;
const CONCURRENCY = Number(args.concurrency);
const SEED = Number(args.seed);
const DAEMON_ARGS = ['--parallel', '2', '--context-size', '256', '--request-timeout', '3s'];

type Job = { kind: 'http'; group: string; req: HostileRequest } | { kind: 'framing'; group: string; c: FramingCase };

/** The traffic mix: every route, weighted toward the ones with the most to validate. */
const tagged = <T>(arb: fc.Arbitrary<T>, f: (x: T) => Job) => arb.map(f);
const mix: fc.Arbitrary<Job> = fc.oneof(
  ...BODY_ROUTES.map((route) => ({
    weight: route.path.startsWith('/api') ? 20 : route.path.includes('images') || route.path.includes('audio') ? 3 : 12,
    arbitrary: tagged(bodyRouteRequest(route), (req): Job => ({ kind: 'http', group: route.name, req })),
  })),
  { weight: 10, arbitrary: tagged(getRouteRequest, (req): Job => ({ kind: 'http', group: 'health and models', req })) },
  { weight: 6, arbitrary: tagged(unknownRouteRequest, (req): Job => ({ kind: 'http', group: 'unknown routes', req })) },
  { weight: 6, arbitrary: tagged(framingRequest, (c): Job => ({ kind: 'framing', group: 'generated framing', c })) },
  { weight: 3, arbitrary: fc.constantFrom(...FRAMING_CASES).map((c): Job => ({ kind: 'framing', group: 'named framing', c })) },
);

/** The large bodies mixed into the run: prompts past the context, big solve batches, bad JSON, one over the 16 MB limit. */
function largeBodies(): { label: string; path: string; body: () => Buffer }[] {
  const MB = 1024 * 1024;
  const chat = (bytes: number) => () => Buffer.from(JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'word '.repeat(Math.floor(bytes / 5)) }], max_tokens: 2 }));
  const completion = (bytes: number) => () => Buffer.from(JSON.stringify({ model: 'tiny', prompt: 'token '.repeat(Math.floor(bytes / 6)), max_tokens: 2 }));
  const embedding = (bytes: number) => () => Buffer.from(JSON.stringify({ model: 'tiny', input: Array.from({ length: 2000 }, () => 'e '.repeat(Math.floor(bytes / 4000))) }));
  const dataset = Array.from({ length: 70_000 }, (_, i) => `record-${i}`).join('\n');
  const batch = () => Buffer.from(JSON.stringify({ solver: 'grover', problems: Array.from({ length: 10 }, () => ({ type: 'pattern_search', dataset, target: { pattern: 'record-7', min_confidence: 2 }, search_space_size: 70_000 })) }));
  const oversizedProblem = () => Buffer.from(JSON.stringify({ solver: 'grover', problem: { type: 'pattern_search', dataset: 'd'.repeat(3 * MB), target: { pattern: 'x', min_confidence: 0.5 }, search_space_size: 4 } }));
  const manyValues = () => Buffer.from(JSON.stringify({ model: 'tiny', input: Array.from({ length: 1_000_000 }, (_, i) => i % 7) }));
  const malformed = (bytes: number) => () => Buffer.from(`{"model":"tiny","messages":[${'{"role":"user","content":"x"},'.repeat(Math.floor(bytes / 30))}`);
  return [
    { label: 'chat prompt 1 MB', path: '/v1/chat/completions', body: chat(1 * MB) },
    { label: 'chat prompt 2 MB', path: '/v1/chat/completions', body: chat(2 * MB) },
    { label: 'chat prompt 4 MB', path: '/v1/chat/completions', body: chat(4 * MB) },
    { label: 'chat prompt 8 MB', path: '/v1/chat/completions', body: chat(8 * MB) },
    { label: 'chat prompt 15.6 MB', path: '/v1/chat/completions', body: chat(15.6 * MB) },
    { label: 'completion prompt 6 MB', path: '/v1/completions', body: completion(6 * MB) },
    { label: 'embeddings 3 MB of strings', path: '/v1/embeddings', body: embedding(3 * MB) },
    { label: 'embeddings 1M tokens (2 MB)', path: '/v1/embeddings', body: manyValues },
    { label: 'solve batch 10 × 0.87 MB', path: '/api/solve/batch', body: batch },
    { label: 'solve problem 3 MB (> 1 MB per problem)', path: '/api/solve', body: oversizedProblem },
    { label: 'malformed JSON 4 MB', path: '/v1/chat/completions', body: malformed(4 * MB) },
    { label: 'body over the limit (17 MB)', path: '/v1/embeddings', body: () => Buffer.alloc(17 * MB, 0x20) },
  ];
}

const daemon = await startDaemon({ args: DAEMON_ARGS });
const endpoints = endpointsOf(daemon.urls);
const pid = daemon.child.pid!;
const at = (i: number): Endpoint => endpoints[i % endpoints.length]!;

// Warm up (model loaded, solve workers started) so "before" is the daemon at work, not at birth.
const warm = (path: string, body: unknown) =>
  rawExchange({ host: at(0).address, port: at(0).port, timeoutMs: 30_000, bytes: Buffer.from(`POST ${path} HTTP/1.1\r\nHost: ${at(0).host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(JSON.stringify(body))}\r\n\r\n${JSON.stringify(body)}`) });
await warm('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
await warm('/v1/embeddings', { model: 'tiny', input: 'hi' });
await warm('/api/solve', { solver: 'grover', problem: { type: 'qrng', bits: 8 }, shots: 8 });
await new Promise((r) => setTimeout(r, 1000));
const rssBefore = rssMb(pid);
const loadBefore = loadavg();

const statuses = new Map<string, number>();
const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
const violations = new Map<string, { count: number; example: string; groups: Set<string> }>();
/** Same kind of violation whatever the numbers or echoed text: the first 90 characters, digits folded. */
const kindOf = (v: string) => v.replace(/\d+/g, 'N').slice(0, 90);
let sent = 0;
let rssPeak = rssBefore;

function record(group: string, label: string, s: Sent): void {
  const ex = s.exchange;
  if (ex.responses.length === 0) count(ex.timedOut ? 'no reply (timeout)' : 'no reply (closed)');
  for (const r of ex.responses) count(String(r.status));
  for (const v of s.violations) {
    const k = kindOf(v);
    const entry = violations.get(k) ?? { count: 0, example: `${label.slice(0, 160)} → ${v.slice(0, 200)}`, groups: new Set<string>() };
    entry.count++;
    entry.groups.add(group);
    violations.set(k, entry);
  }
}

// The monitor's histogram and counts run from the daemon's start (its start-up and the warm-up
// above are in them); the stalls it logs carry their time, so the flood's own are told apart.
const floodStartedAt = Date.now();
const probe = startHealthProbe(daemon.urls);
const rssTimer = setInterval(() => {
  rssPeak = Math.max(rssPeak, rssMb(pid));
}, 250);
const started = performance.now();
const deadline = started + MAX_MS;

// Large bodies, one at a time, spread over the run (their own lane, besides the fuzz lanes).
const large = largeBodies();
const largeResults: { label: string; status: string; ms: number; violations: string[] }[] = [];
const largeLane = (async () => {
  for (const [i, item] of large.entries()) {
    while (sent < ((i + 0.5) / large.length) * REQUESTS && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const body = item.body();
    const e = at(i);
    const ex: RawExchange = await rawExchange({ host: e.address, port: e.port, timeoutMs: 60_000, bytes: Buffer.concat([Buffer.from(`POST ${item.path} HTTP/1.1\r\nHost: ${e.host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`), body]) });
    const v = exchangeViolations(ex, { head: false, foreignCharset: false, mayBeSilent: false, responses: 1 });
    record('large bodies', item.label, { exchange: ex, violations: v });
    largeResults.push({ label: `${item.label} (${(body.length / 1024 / 1024).toFixed(1)} MB)`, status: ex.responses[0] === undefined ? 'no reply' : String(ex.responses[0].status), ms: ex.ms, violations: v });
  }
})();

// The fuzz lanes: jobs generated in seeded chunks (so a run replays), CONCURRENCY at a time.
const CHUNK = 250;
let chunk: Job[] = [];
let chunkIndex = 0;
let next = 0;
const nextJob = (): Job | undefined => {
  if (sent >= REQUESTS || performance.now() >= deadline) return undefined;
  if (next >= chunk.length) {
    chunk = fc.sample(mix, { seed: SEED + chunkIndex++, numRuns: CHUNK });
    next = 0;
  }
  sent++;
  return chunk[next++];
};
await Promise.all(
  Array.from({ length: CONCURRENCY }, async (_, lane) => {
    for (let job = nextJob(); job !== undefined; job = nextJob()) {
      const e = at(lane + sent);
      const s = job.kind === 'http' ? await sendHostile(job.req, e, 30_000) : await sendFraming(job.c, e, 10_000);
      record(job.group, job.kind === 'http' ? job.req.label : job.c.label, s);
    }
  }),
);
await largeLane;
const elapsedS = (performance.now() - started) / 1000;
const floodEndedAt = Date.now();
const health = await probe.stop();
clearInterval(rssTimer);
const rssEnd = rssMb(pid);
// The daemon's own view of its event loop over the flood, read before the idle wait (memory
// relief's GC, which runs once idle, is not a request's doing; it shows in the second reading).
const healthNow = () => rawExchange({ host: at(0).address, port: at(0).port, timeoutMs: 5_000, bytes: Buffer.from(`GET /health HTTP/1.1\r\nHost: ${at(0).host}\r\nConnection: close\r\n\r\n`) });
const eventLoopOf = (ex: RawExchange): EventLoopHealth | null => {
  try {
    return (JSON.parse(ex.responses[0]?.body.toString() ?? '') as { event_loop?: EventLoopHealth }).event_loop ?? null;
  } catch {
    return null;
  }
};
const eventLoopFlood = eventLoopOf(await healthNow());
await new Promise((r) => setTimeout(r, 10_000));
const rssAfter10s = rssMb(pid);
await new Promise((r) => setTimeout(r, 20_000));
const rssAfter30s = rssMb(pid);
const alive = daemon.child.exitCode === null && daemon.child.signalCode === null;
const last = await healthNow();
const eventLoopAfter = eventLoopOf(last);
// The daemon logs each stall with the requests in flight (src/http/event-loop-monitor.ts).
const stallLines = daemon.logs.filter((l) => typeof l.stall_ms === 'number') as { time: number; stall_ms: number; held_ms: number; cpu_ms: number; gc_ms: number; in_flight: { method: string; path: string; body_bytes?: number; ms: number }[] }[];
const exitCode = await daemon.stop();

const ms = health.samples.map((s) => s.ms);
const result = {
  machine: { cpu: cpus()[0]?.model ?? 'cpu', cores: availableParallelism(), node: process.version, load_before: loadBefore.map((l) => +l.toFixed(2)), load_after: loadavg().map((l) => +l.toFixed(2)) },
  daemon_args: DAEMON_ARGS,
  seed: SEED,
  requests: sent + large.length,
  fuzz_requests: sent,
  large_bodies: large.length,
  elapsed_s: +elapsedS.toFixed(1),
  statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a.localeCompare(b))),
  violations: [...violations].sort((a, b) => b[1].count - a[1].count).map(([kind, v]) => ({ kind, count: v.count, groups: [...v.groups], example: v.example })),
  large: largeResults.map((l) => ({ ...l, ms: Math.round(l.ms) })),
  health: {
    checks: ms.length,
    failed: health.samples.filter((s) => s.status !== 200).length,
    p50_ms: +percentile(ms, 50).toFixed(1),
    p99_ms: +percentile(ms, 99).toFixed(1),
    max_ms: +Math.max(...ms).toFixed(1),
    over_2s: ms.filter((m) => m >= 2000).length,
  },
  event_loop: eventLoopFlood === null
    ? null
    : {
        p50_ms: eventLoopFlood.delay_ms.p50,
        p99_ms: eventLoopFlood.delay_ms.p99,
        max_ms: eventLoopFlood.delay_ms.max,
        stalls_over_50ms: eventLoopFlood.stalls,
        held_stalls_over_50ms: eventLoopFlood.held_stalls ?? null,
        longest_held_ms: eventLoopFlood.longest_held_ms ?? null,
        held_stalls_after_30s_idle: eventLoopAfter?.held_stalls ?? null,
        longest_held_after_30s_idle_ms: eventLoopAfter?.longest_held_ms ?? null,
      },
  // Held stalls over 50 ms logged while the flood ran (start-up and warm-up excluded), and in the 30 s after it.
  flood_held_stalls: stallLines.filter((l) => l.time >= floodStartedAt && l.time <= floodEndedAt).map((l) => l.held_ms).sort((a, b) => b - a),
  idle_held_stalls: stallLines.filter((l) => l.time > floodEndedAt).map((l) => l.held_ms).sort((a, b) => b - a),
  stalls: stallLines
    .sort((a, b) => b.held_ms - a.held_ms)
    .slice(0, 12)
    .map((l) => ({ ms: l.stall_ms, held_ms: l.held_ms, cpu_ms: l.cpu_ms, gc_ms: l.gc_ms, in_flight: l.in_flight.map((r) => `${r.method} ${r.path.slice(0, 40)}${r.body_bytes === undefined ? '' : ` ${(r.body_bytes / 1024).toFixed(0)} KiB`} (${r.ms} ms)`) })),
  rss_mb: { before: Math.round(rssBefore), peak: Math.round(rssPeak), end: Math.round(rssEnd), after_10s_idle: Math.round(rssAfter10s), after_30s_idle: Math.round(rssAfter30s) },
  alive,
  health_after: last.responses[0]?.status ?? null,
  exit_code: exitCode,
};

if (args.json) {
  console.log(JSON.stringify(result, null, 2));
} else {
  const m = result.machine;
  console.log(`# svc reliability bench — ${m.cpu} × ${m.cores}, Node ${m.node}, load ${m.load_before.join(' / ')} → ${m.load_after.join(' / ')}`);
  console.log(`svc serve ${DAEMON_ARGS.join(' ')} (tiny model); seed ${SEED}, concurrency ${CONCURRENCY}\n`);
  console.log(`Requests: ${result.requests} (${sent} generated + ${large.length} large bodies) in ${result.elapsed_s} s (${(sent / elapsedS).toFixed(0)}/s)`);
  console.log(`Statuses: ${Object.entries(result.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(`/health during the run: ${result.health.checks} checks, p50 ${result.health.p50_ms} ms, p99 ${result.health.p99_ms} ms, max ${result.health.max_ms} ms, ≥ 2 s: ${result.health.over_2s}, failed: ${result.health.failed}`);
  const el = result.event_loop;
  console.log(
    el === null
      ? 'Event loop: the daemon did not report it'
      : `Event loop (the daemon's histogram over the flood): p50 ${el.p50_ms} ms, p99 ${el.p99_ms} ms, max ${el.max_ms} ms; stalls over 50 ms: ${el.stalls_over_50ms}, of which held by the daemon's own work (not waiting for a core): ${el.held_stalls_over_50ms}, longest held ${el.longest_held_ms} ms (after 30 s idle: ${el.held_stalls_after_30s_idle}, ${el.longest_held_after_30s_idle_ms} ms)`,
  );
  console.log(`Held stalls over 50 ms during the flood: ${result.flood_held_stalls.length}${result.flood_held_stalls.length > 0 ? ` (${result.flood_held_stalls.join(', ')} ms)` : ''}; in the 30 s after it: ${result.idle_held_stalls.length}${result.idle_held_stalls.length > 0 ? ` (${result.idle_held_stalls.join(', ')} ms)` : ''}`);
  for (const st of result.stalls) console.log(`  held ${st.held_ms} ms of a ${st.ms} ms stall (CPU ${st.cpu_ms} ms, GC ${st.gc_ms} ms); in flight: ${st.in_flight.join(', ') || 'nothing'}`);
  console.log(`Daemon RSS: ${result.rss_mb.before} MB before, ${result.rss_mb.peak} MB peak, ${result.rss_mb.end} MB at the end, ${result.rss_mb.after_10s_idle} MB after 10 s idle, ${result.rss_mb.after_30s_idle} MB after 30 s`);
  console.log(`Alive throughout: ${alive ? 'yes' : 'NO'}; /health after: ${result.health_after}; exit code on SIGTERM: ${exitCode}\n`);
  console.log('| large body | status | ms | violations |\n|---|---:|---:|---|');
  for (const l of result.large) console.log(`| ${l.label} | ${l.status} | ${l.ms} | ${l.violations.join('; ') || '—'} |`);
  console.log(`\nRule violations: ${result.violations.reduce((a, v) => a + v.count, 0)} in ${result.violations.length} kinds`);
  for (const v of result.violations) console.log(`- ${v.count} × [${v.groups.join(', ')}] ${v.kind}\n    e.g. ${v.example.replaceAll('\n', ' ')}`);
}
