/**
 * An open-loop constant-rate load generator: request i is due at start + i / rate, whatever
 * happened to the requests before it. autocannon's `overallRate` refills a per-second quota, so
 * its requests leave in a burst at the top of each second and the latencies it reports are mostly
 * that burst's queueing; a held rate is only honest if the arrivals are spread evenly.
 *
 * Every 200 response is timed twice, to the end of its body: from the moment it was handed to
 * undici (what the side under test did) and from the moment it was due (wrk2's correction for
 * coordinated omission: a stalled side, or a stalled generator, delays the requests behind it,
 * and that wait counts too). When all `connections` are busy undici queues the rest in the pool;
 * the second figure shows that.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface OpenLoopOptions {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** Keep-alive connections, opened as the pool needs them. */
  connections: number;
  /** Requests per second. */
  rate: number;
  /** Measured seconds, after the warm-up. */
  seconds: number;
  /** Seconds at the same rate, sent but not recorded, right before the measured ones. */
  warmupSeconds?: number;
}

export interface OpenLoopResult {
  /** Float ms from the send to the end of the body, sorted ascending; 200 responses only. */
  fromSend: number[];
  /** Float ms from the intended send time to the end of the body, sorted ascending. */
  fromIntended: number[];
  /** How late the generator itself sent (actual − intended send time), float ms, sorted ascending. */
  sendLag: number[];
  /** 200 responses per second over the measured span (first due time to last body end). */
  rps: number;
  sent: number;
  non2xx: number;
  errors: number;
  /** The most requests in flight (sent, body not yet read) at once, queued ones included. */
  maxInFlight: number;
}

export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(options.url);
  const path = `${target.pathname}${target.search}`;
  // The same 10 s limit autocannon gives a request, so a stuck side fails its requests instead
  // of hanging the bench.
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const interval = 1000 / options.rate;
  const warmup = Math.round((options.warmupSeconds ?? 0) * options.rate);
  const total = warmup + Math.round(options.seconds * options.rate);
  const fromSend: number[] = [];
  const fromIntended: number[] = [];
  const sendLag: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let lastDone = 0;
  const pending: Promise<void>[] = [];

  const send = (index: number, intended: number): Promise<void> => {
    const recorded = index >= warmup;
    const sentAt = performance.now();
    if (recorded) sendLag.push(sentAt - intended);
    inFlight++;
    if (inFlight > maxInFlight && recorded) maxInFlight = inFlight;
    return pool.request({ path, method: options.method, headers: options.headers, body: options.body })
      .then(async (response) => {
        // The full body, as a client would read it; an unread body would also hold the connection.
        await response.body.arrayBuffer();
        const done = performance.now();
        if (!recorded) return;
        lastDone = Math.max(lastDone, done);
        if (response.statusCode === 200) {
          fromSend.push(done - sentAt);
          fromIntended.push(done - intended);
        } else {
          non2xx++;
        }
      })
      .catch(() => { if (recorded) errors++; })
      .finally(() => { inFlight--; });
  };

  const start = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    // A 1 ms timer rather than a busy loop: the generator shares the cores with the side under
    // test. Each tick sends every request whose time has come, so a late tick sends a few at once
    // and the correction above charges them for the lateness.
    const timer = setInterval(() => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        pending.push(send(next, start + next * interval));
        next++;
      }
      if (next >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await Promise.all(pending);
  await pool.close();

  const measuredStart = start + warmup * interval;
  const byValue = (a: number, b: number) => a - b;
  return {
    fromSend: fromSend.sort(byValue),
    fromIntended: fromIntended.sort(byValue),
    sendLag: sendLag.sort(byValue),
    rps: fromSend.length === 0 ? 0 : fromSend.length / ((lastDone - measuredStart) / 1000),
    sent: total - warmup,
    non2xx,
    errors,
    maxInFlight,
  };
}
