/**
 * The largest legal requests must not hold the daemon's event loop (issue 23, §5): a real
 * `svc serve` process gets each one in turn, and its own event-loop monitor (`/health`
 * `event_loop`, src/http/event-loop-monitor.ts) says whether the loop was held while it ran.
 *
 * What is read is `held_ms`: a stall less the time the event loop's thread waited in the
 * kernel's run queue. On this shared 2-core machine the loop often waits 100–400 ms for a core
 * that other processes hold, which is the machine's doing; the time it was held (its own work,
 * a GC, a synchronous call) is the daemon's. The daemon's bound is 50 ms (held stalls over it are
 * counted and logged); this test asserts a coarse HELD_BOUND_MS so it is no timing test on a
 * noisy machine but still catches the stalls that were there: before the fix the built-in
 * embedder held the loop 550–810 ms on a 16 MB request. The strict figures are measured by
 * `npm run bench:reliability` (docs/BENCHMARKS.md, "Reliability").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { portfolioOf } from '../quantum/fixtures.ts';

const HELD_BOUND_MS = 250;
const MB = 1024 * 1024;
/** The daemon's default body limit (16 MiB): the largest legal request. */
const BODY_LIMIT = 16 * MB;

interface HeldStall {
  ended_at_ms: number;
  ms: number;
  held_ms: number;
}
interface EventLoop {
  stalls: number;
  held_stalls: number;
  recent_held_stalls: HeldStall[];
}

let daemon: DaemonProcess;

async function eventLoop(): Promise<EventLoop> {
  const body = (await (await fetch(`${daemon.url}/health`)).json()) as { event_loop: EventLoop };
  return body.event_loop;
}

async function post(path: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

/** A body of exactly `bytes` whose one string field (`""` in `template`) is filled with `fill`. */
function filledTo(bytes: number, template: object, fill: string): string {
  const empty = JSON.stringify(template);
  const room = bytes - Buffer.byteLength(empty);
  return empty.replace('""', `"${fill.repeat(Math.floor(room / fill.length))}${'x'.repeat(room % fill.length)}"`);
}

/**
 * Sends one request and returns what the daemon's monitor recorded as held while it ran: the
 * held stalls that ended between sending it and a moment after its answer.
 */
async function heldDuring(path: string, body: string): Promise<{ status: number; text: string; held: HeldStall[]; heldCount: number }> {
  const before = await eventLoop();
  const sentAt = Date.now();
  const answer = await post(path, body);
  // The monitor records a stall one event-loop turn after it ends: give it a moment.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const after = await eventLoop();
  return { ...answer, held: after.recent_held_stalls.filter((s) => s.ended_at_ms >= sentAt), heldCount: after.held_stalls - before.held_stalls };
}

describe('the largest legal requests do not hold the event loop', { timeout: 600_000 }, () => {
  before(async () => {
    daemon = await startDaemon({ args: ['--parallel', '2', '--context-size', '2048'] });
    // What happens once per daemon and model (importing llama.cpp's binding, resolving the chat
    // template on the first chat: docs/runtime.md, "Scheduling") is not a request's doing.
    assert.equal((await post('/v1/chat/completions', JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }))).status, 200);
    assert.equal((await post('/api/solve', JSON.stringify({ solver: 'grover', problem: { type: 'qrng', bits: 8 } }))).status, 200);
  });

  after(async () => {
    await daemon.stop();
  });

  const cases: { name: string; path: string; body: () => string; status: number }[] = [
    {
      name: 'a 1,048,576-bit qrng, as binary digits (a 1 MB answer)',
      path: '/api/solve',
      body: () => JSON.stringify({ solver: 'grover', problem: { type: 'qrng', bits: 1_048_576, format: 'binary' } }),
      status: 200,
    },
    {
      name: 'a batch of ten 1,048,576-bit qrngs (a 10 MB answer)',
      path: '/api/solve/batch',
      body: () => JSON.stringify({ solver: 'grover', problems: Array.from({ length: 10 }, () => ({ type: 'qrng', bits: 1_048_576, format: 'binary' })) }),
      status: 200,
    },
    {
      name: 'a batch of ten 24-qubit solves (QAOA portfolios of 24 assets)',
      path: '/api/solve/batch',
      body: () => JSON.stringify({ solver: 'qubo', problems: Array.from({ length: 10 }, (_, i) => portfolioOf(24, i + 1)) }),
      status: 200,
    },
    {
      name: 'a 16 MB chat prompt (refused: past the context)',
      path: '/v1/chat/completions',
      body: () => filledTo(BODY_LIMIT, { model: 'tiny', messages: [{ role: 'user', content: '' }], max_tokens: 2 }, 'word '),
      status: 400,
    },
    {
      name: 'built-in embeddings of one 16 MB text',
      path: '/v1/embeddings',
      body: () => filledTo(BODY_LIMIT, { model: 'svc-hashed-embed-v2', input: '' }, 'lorem ipsum dolor sit amet '),
      status: 200,
    },
    {
      name: 'built-in embeddings of 2,048 texts of 7.9 KB (15 MB in, 4 MB of vectors out)',
      path: '/v1/embeddings',
      body: () => JSON.stringify({ model: 'svc-hashed-embed-v2', input: Array.from({ length: 2048 }, (_, i) => `doc ${i} ${'lorem ipsum dolor sit amet '.repeat(290)}`) }),
      status: 200,
    },
  ];

  for (const c of cases) {
    test(c.name, async (t) => {
      const body = c.body();
      assert.ok(Buffer.byteLength(body) <= BODY_LIMIT, 'a legal body');
      const result = await heldDuring(c.path, body);
      assert.equal(result.status, c.status, result.text.slice(0, 300));
      const longest = Math.max(0, ...result.held.map((s) => s.held_ms));
      t.diagnostic(`${(body.length / MB).toFixed(1)} MB in, ${(result.text.length / MB).toFixed(1)} MB out; held stalls over 50 ms: ${result.heldCount}, longest ${longest} ms`);
      assert.deepEqual(result.held.filter((s) => s.held_ms >= HELD_BOUND_MS), [], `the event loop was held ${HELD_BOUND_MS} ms or more while it ran`);
    });
  }
});
