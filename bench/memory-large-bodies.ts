/**
 * Memory of a real daemon (tiny model) that is sent many large hostile bodies: its RSS (from
 * /proc) and, through bench/memory-probe.ts preloaded into it, its heap and external memory,
 * before, at the peak, and for a while after the last response.
 *
 *   npx node bench/memory-large-bodies.ts [--count 200] [--concurrency 4] [--chat-max-mb 4]
 *     [--tail 30] [--env MALLOC_ARENA_MAX=2] [--node-options "--max-semi-space-size=8"]
 *     [--gc-after] [--kinds malformed-json,oversized]
 *
 * `--gc-after` runs the daemon with --expose-gc and forces a full GC once the tail is over,
 * to tell garbage that no GC has collected yet from memory that is really held. `--malloc-trim`
 * then calls glibc's malloc_trim(0) in the daemon through gdb (Linux, gdb installed), to tell
 * memory glibc keeps for reuse from memory in use.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDaemon, waitForHealth } from '../test/helpers/daemon-process.ts';
import { LARGE_BODY_KINDS, driveLargeBodies, largeBody, rssMb, sendBody, type LargeBodyKind, type SentBody } from '../test/helpers/large-bodies.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '4' },
    'chat-max-mb': { type: 'string', default: '4' },
    tail: { type: 'string', default: '30' },
    env: { type: 'string', multiple: true, default: [] },
    'node-options': { type: 'string', default: '' },
    'gc-after': { type: 'boolean', default: false },
    'malloc-trim': { type: 'boolean', default: false },
    kinds: { type: 'string' },
    seed: { type: 'string', default: '7' },
  },
});

interface Probe { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; spaces: Record<string, number> }

const probe = fileURLToPath(new URL('memory-probe.ts', import.meta.url));
const env: Record<string, string> = {};
for (const kv of values.env) {
  const eq = kv.indexOf('=');
  env[kv.slice(0, eq)] = kv.slice(eq + 1);
}
env.NODE_OPTIONS = [`--import=${probe}`, values['gc-after'] ? '--expose-gc' : '', values['node-options']].filter((s) => s !== '').join(' ');

const daemon = await startDaemon({ env });
const pid = daemon.child.pid!;
let last: Probe | undefined;
createInterface({ input: daemon.child.stderr }).on('line', (line) => {
  if (line.startsWith('@@mem ')) last = JSON.parse(line.slice(6)) as Probe;
});

/** Resident MB by kind of mapping: glibc's main heap, anonymous maps (V8 pages, malloc arenas, mmapped blocks), files. */
function residentByMapping(): Record<string, number> {
  const sums = new Map<string, number>();
  let kind = 'anon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head !== null) {
      const name = head[1]!;
      kind = name === '' ? 'anon' : name.startsWith('[') ? name : 'file';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) sums.set(kind, (sums.get(kind) ?? 0) + Number(rss[1]) / 1024);
  }
  return Object.fromEntries([...sums].filter(([, mb]) => mb >= 1).map(([k, mb]) => [k, Math.round(mb)]));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const snapshot = (label: string) => {
  const p = last;
  return {
    label,
    rss: Math.round(rssMb(pid)),
    heapUsed: p?.heapUsed,
    heapTotal: p?.heapTotal,
    external: p?.external,
    arrayBuffers: p?.arrayBuffers,
    old: p?.spaces.old_space,
    large: p?.spaces.large_object_space,
    newSpace: p?.spaces.new_space,
  };
};

try {
  await waitForHealth(daemon.url, (h) => h.model.loaded.length > 0);
  // Warm every path with small bodies, so JIT code and first-use allocations are in the baseline.
  for (const kind of LARGE_BODY_KINDS) await sendBody(daemon.url, largeBody(kind, kind === 'oversized' ? 17 * 1024 * 1024 : 64 * 1024));
  await fetch(`${daemon.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
  }).then((r) => r.text());
  await sleep(3000);
  const rows = [snapshot('before')];
  const mappings = [{ label: 'before', ...residentByMapping() }];
  let peak = rows[0]!;
  const sampler = setInterval(() => {
    const s = snapshot('peak');
    if (s.rss > peak.rss) peak = s;
  }, 100);
  const started = performance.now();
  const kinds = values.kinds === undefined ? undefined : values.kinds.split(',') as LargeBodyKind[];
  const results: SentBody[] = await driveLargeBodies(daemon.url, {
    count: Number(values.count), concurrency: Number(values.concurrency), chatMaxMb: Number(values['chat-max-mb']),
    seed: Number(values.seed), ...(kinds === undefined ? {} : { kinds }),
  });
  const driveMs = performance.now() - started;
  clearInterval(sampler);
  rows.push(peak);
  const tail = Number(values.tail);
  let waited = 0;
  for (const at of [0, 5, 10, 20, 30, 45, 60, 90, 120].filter((s) => s <= tail)) {
    await sleep((at - waited) * 1000);
    waited = at;
    rows.push(snapshot(`+${at}s`));
  }
  mappings.push({ label: `+${waited}s`, ...residentByMapping() });
  if (values['gc-after']) {
    daemon.child.kill('SIGUSR2');
    await sleep(2000);
    rows.push(snapshot(`+${waited}s gc+2s`));
    mappings.push({ label: `+${waited}s gc+2s`, ...residentByMapping() });
  }

  if (values['malloc-trim']) {
    execFileSync('gdb', ['-p', String(pid), '-batch', '-ex', 'call (int)malloc_trim(0)'], { stdio: 'ignore' });
    await sleep(1000);
    rows.push(snapshot(`+${waited}s malloc_trim`));
    mappings.push({ label: `+${waited}s malloc_trim`, ...residentByMapping() });
  }

  const byKind = new Map<string, Map<string, number>>();
  for (const r of results) {
    const counts = byKind.get(r.kind) ?? new Map<string, number>();
    counts.set(String(r.status), (counts.get(String(r.status)) ?? 0) + 1);
    byKind.set(r.kind, counts);
  }
  const sentMb = results.reduce((s, r) => s + r.bytes, 0) / 1024 / 1024;
  console.log(`${results.length} bodies, ${sentMb.toFixed(0)} MB in ${(driveMs / 1000).toFixed(1)} s (concurrency ${values.concurrency}); env ${JSON.stringify(env)}`);
  for (const [kind, counts] of byKind) {
    const ms = results.filter((r) => r.kind === kind).map((r) => r.ms).sort((a, b) => a - b);
    console.log(`  ${kind.padEnd(18)} ${[...counts].map(([s, n]) => `${s}×${n}`).join(' ')}  median ${Math.round(ms[ms.length >> 1] ?? 0)} ms, max ${Math.round(ms.at(-1) ?? 0)} ms`);
  }
  const unexpected = results.filter((r) => r.status !== r.expect);
  if (unexpected.length > 0) console.log(`  unexpected: ${unexpected.slice(0, 5).map((r) => `${r.kind} ${r.bytes} → ${r.status}`).join('; ')}`);
  console.table(rows);
  console.table(mappings);
  // Logged at debug level: run with --env SVC_LOG_LEVEL=debug to see when the daemon gave memory back.
  for (const entry of daemon.logs.filter((l) => String(l.msg).startsWith('memory relief'))) console.log(JSON.stringify(entry));
} finally {
  await daemon.stop();
}
