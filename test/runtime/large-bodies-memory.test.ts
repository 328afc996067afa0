/**
 * Memory after a flood of large hostile bodies: RSS used to climb from ~160 MB to ~650 MB and
 * stay ~350–400 MB above its start while the daemon sat idle (V8 does not collect an idle heap;
 * see memory-relief.ts). The real daemon is sent 200 bodies of 1–16 MB (and beyond), four at a
 * time; it must refuse each with the envelope, then give the memory back once idle.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon, waitForHealth } from '../helpers/daemon-process.ts';
import { LARGE_BODY_KINDS, driveLargeBodies, largeBody, mainHeapMb, rssMb, sendBody } from '../helpers/large-bodies.ts';

/**
 * "Near its start", for RSS outside glibc's main heap (V8's pages, buffers, code). Measured on a
 * 2-core machine (bench/memory-large-bodies.ts): 8–16 MB above the start once memory is given
 * back, 170–250 MB above it when it is not. 64 MB leaves room for a busy machine.
 */
const NEAR_MB = 64;
/**
 * glibc keeps blocks freed into its main heap for reuse (60–170 MB after this flood; malloc_trim(0)
 * takes them back below the start), which no JavaScript can release. So RSS as a whole is only
 * required to give back 40% of what the flood added: measured 65–95% given back alone, 50% once
 * in a full `npm test` on a busy 2-core machine (2026-11-27: 194 → 636 → 415 MB, with RSS outside
 * glibc's heap back at its start), and 15–35% without the relief, which this still fails.
 */
const GIVEN_BACK = 0.4;
/** The flood must have raised RSS well beyond NEAR_MB, or a pass would prove nothing. */
const MIN_GROWTH_MB = 4 * NEAR_MB;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outsideMainHeap = (pid: number) => rssMb(pid) - mainHeapMb(pid);

test('after 200 large hostile bodies, each refused with the envelope, RSS returns near its start', { timeout: 180_000 }, async (t) => {
  // debug: the daemon logs each relief, which the diagnostics below show. One malloc arena:
  // glibc keeps blocks freed by the intake and solve worker threads in arenas of their own,
  // mapped anonymously like V8's pages (measured 10–70 MB here, more on a busy machine); with one
  // arena they are all in [heap], which the tight check below leaves out for the reason given.
  const daemon = await startDaemon({ env: { SVC_LOG_LEVEL: 'debug', MALLOC_ARENA_MAX: '1' } });
  const pid = daemon.child.pid!;
  try {
    await waitForHealth(daemon.url, (h) => h.model.loaded.length > 0);
    // Every path once with a small body, so the baseline already holds their code and first-use state.
    for (const kind of LARGE_BODY_KINDS) await sendBody(daemon.url, largeBody(kind, kind === 'oversized' ? 17 * 1024 * 1024 : 64 * 1024));
    const chat = await fetch(`${daemon.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    });
    assert.equal(chat.status, 200);
    await chat.text();
    // The daemon gives memory back 2 s after it goes idle (the model load counts as growth).
    await sleep(4_000);
    const before = { rss: rssMb(pid), outside: outsideMainHeap(pid) };

    let peak = before.rss;
    const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 100);
    const started = performance.now();
    // Over-context prompts stay at 1–2 MB (the daemon refuses larger ones from their size alone, which would make the flood lighter).
    const results = await driveLargeBodies(daemon.url, { count: 200, concurrency: 4, chatMaxMb: 2 }).finally(() => clearInterval(sampler));
    const driveS = (performance.now() - started) / 1000;

    assert.equal(results.length, 200);
    for (const r of results) {
      assert.equal(r.status, r.expect, `${r.kind} of ${r.bytes} bytes`);
      assert.notEqual(r.errorCode, undefined, `${r.kind} of ${r.bytes} bytes is answered with the error envelope`);
    }
    assert.ok(peak - before.rss >= MIN_GROWTH_MB, `the flood raised RSS by ${Math.round(peak - before.rss)} MB, expected at least ${MIN_GROWTH_MB}`);

    // Generous bound on "gives it back": relief runs 2 s after the last response; allow 30 s so a
    // loaded CI machine cannot fail the test by being slow. The assertions are about where RSS
    // settles, not how fast.
    let outside = outsideMainHeap(pid);
    for (let waited = 0; outside > before.outside + NEAR_MB && waited < 30_000; waited += 250) {
      await sleep(250);
      outside = outsideMainHeap(pid);
    }
    const after = rssMb(pid);
    for (const l of daemon.logs.filter((l) => String(l.msg).startsWith('memory relief'))) t.diagnostic(JSON.stringify(l));
    t.diagnostic(`RSS ${Math.round(before.rss)} MB before, ${Math.round(peak)} MB peak, ${Math.round(after)} MB after `
      + `(outside glibc's heap ${Math.round(before.outside)} → ${Math.round(outside)} MB); drive ${driveS.toFixed(1)} s`);
    assert.ok(outside <= before.outside + NEAR_MB,
      `RSS outside glibc's heap settled at ${Math.round(outside)} MB, ${Math.round(outside - before.outside)} MB above its start`);
    assert.ok(peak - after >= GIVEN_BACK * (peak - before.rss),
      `RSS went ${Math.round(before.rss)} → ${Math.round(peak)} → ${Math.round(after)} MB: less than ${GIVEN_BACK * 100}% of the growth given back`);
    assert.equal((await fetch(`${daemon.url}/health`)).status, 200);
  } finally {
    await daemon.stop();
  }
});
