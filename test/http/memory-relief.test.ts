import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { installMemoryRelief } from '../../src/http/memory-relief.ts';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Fastify app with relief on, its debug log lines, a route that leaves ~100 MB of garbage and one that waits. */
function appWithRelief() {
  const logs: { msg: string; rssBeforeMb?: number; rssAfterMb?: number }[] = [];
  const stream = new Writable({ write(chunk: Buffer, _encoding, done) { logs.push(JSON.parse(chunk.toString())); done(); } });
  const app = Fastify({ logger: { level: 'debug', stream } });
  installMemoryRelief(app, { idleMs: 100, growthBytes: 32 * MB, minIntervalMs: 0 });
  let release: () => void = () => {};
  const released = new Promise<void>((r) => { release = r; });
  // JavaScript objects (a big Buffer would be freed at once by V8's external-memory pressure):
  // unreferenced once answered, they stay until a full GC, which an idle process never runs
  app.get('/grow', async () => ({ n: Array.from({ length: 300_000 }, (_, i) => ({ i, s: `${'x'.repeat(50)}${i}` })).length }));
  app.get('/wait', async () => { await released; return { ok: true }; });
  const reliefs = () => logs.filter((l) => l.msg.startsWith('memory relief'));
  return { app, reliefs, release };
}

// Waits for a relief with a generous bound: the behaviour under test is that it happens at all.
async function waitFor<T>(get: () => T[], ms = 10_000): Promise<T[]> {
  for (let waited = 0; get().length === 0 && waited < ms; waited += 25) await sleep(25);
  return get();
}

test('once idle after the process grew, memory is given back by a GC', async () => {
  const { app, reliefs } = appWithRelief();
  try {
    assert.equal((await app.inject('/grow')).statusCode, 200);
    const [relief] = await waitFor(reliefs);
    assert.ok(relief !== undefined, 'a relief was logged');
    assert.ok(relief.rssBeforeMb! - relief.rssAfterMb! >= 32, `RSS ${relief.rssBeforeMb} → ${relief.rssAfterMb} MB: the garbage was freed`);
  } finally {
    await app.close();
  }
});

test('no relief while a request is in flight; it comes once the last one ends', async () => {
  const { app, reliefs, release } = appWithRelief();
  try {
    const waiting = app.inject('/wait');
    assert.equal((await app.inject('/grow')).statusCode, 200);
    // Idle time is 100 ms; six times that with a request still open must not bring a GC pause.
    await sleep(600);
    assert.equal(reliefs().length, 0);
    release();
    assert.equal((await waiting).statusCode, 200);
    assert.equal((await waitFor(reliefs)).length, 1);
  } finally {
    await app.close();
  }
});

test('no relief when the process has not grown', async () => {
  const { app, reliefs } = appWithRelief();
  try {
    const res = await app.inject({ method: 'GET', url: '/nothing-here' });
    assert.equal(res.statusCode, 404);
    await sleep(600);
    assert.equal(reliefs().length, 0);
  } finally {
    await app.close();
  }
});
