import { closeSync, openSync, readSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';

/**
 * How long the daemon's event loop was held, for `/health` (`event_loop`) and the log.
 *
 * Two instruments, both cheap: node:perf_hooks' event-loop delay histogram (a libuv timer in
 * C++ every `resolutionMs`, so its percentiles cost no JavaScript) for the distribution since
 * start, and a JavaScript timer every `resolutionMs` that notices when it fired late by more
 * than `stallMs`: a stall. Each stall is counted and logged with the requests that were in
 * flight, which is what names the culprit.
 *
 * A late timer has two causes: the thread was busy (JavaScript, a GC, a synchronous call: the
 * daemon's own doing) or it was ready but waited for a core that other processes or threads
 * held (a busy machine). On a shared 2-core machine the second alone made stalls of 100–450 ms
 * while the event loop ran 7 ms a second. So each stall also says how long the thread waited
 * in the kernel's run queue then (Linux: /proc/thread-self/schedstat) and how much CPU it used;
 * `held_ms` is the stall less the run-queue wait (elsewhere: the CPU time), and a stall whose
 * held time passes `stallMs` is counted apart (`held_stalls`), logged at warn and kept in a
 * short list with when it ended (`recent_held_stalls`, for a client that wants to know whether
 * its own request held the loop): those are the ones a request can cause.
 */
export interface EventLoopMonitorOptions {
  /** A delay over this is a stall, ms; default 50 (the daemon's bound, docs/runtime.md). */
  stallMs?: number;
  /** Sampling interval of both instruments, ms; default 10. */
  resolutionMs?: number;
  /** How many of the latest held stalls `/health` lists; default 20. */
  recent?: number;
  /** Told of each stall as soon as the loop is free again, with what `snapshot` returned then. */
  onStall?: (stall: EventLoopStall, snapshot: unknown) => void;
  /** Called the moment a stall is noticed (before anything else runs), for onStall. */
  snapshot?: () => unknown;
}

export interface EventLoopStall {
  /** When the stall ended, ms since the Unix epoch. */
  ended_at_ms: number;
  /** How long the loop was held beyond the sampling interval, ms. */
  ms: number;
  /** How much of it the thread was not waiting for a core (Linux; elsewhere its CPU time), ms. */
  held_ms: number;
  /** CPU time the thread used in it, ms. */
  cpu_ms: number;
  /** How much of it V8's garbage collector spent on the main thread, ms. */
  gc_ms: number;
}

/** The `/health` field: delays in ms beyond the sampling interval, since the daemon started. */
export interface EventLoopHealth {
  delay_ms: { p50: number; p99: number; max: number; mean: number };
  stall_threshold_ms: number;
  stalls: number;
  longest_stall_ms: number;
  /** Stalls whose held time passed the threshold: the daemon's own work held the loop. */
  held_stalls: number;
  longest_held_ms: number;
  /** The latest of those, oldest first. */
  recent_held_stalls: EventLoopStall[];
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

export class EventLoopMonitor {
  readonly #histogram: ReturnType<typeof monitorEventLoopDelay>;
  readonly #stallMs: number;
  readonly #resolutionMs: number;
  readonly #recentCap: number;
  readonly #onStall: ((stall: EventLoopStall, snapshot: unknown) => void) | undefined;
  readonly #snapshot: (() => unknown) | undefined;
  readonly #recent: EventLoopStall[] = [];
  #stalls = 0;
  #longest = 0;
  #heldStalls = 0;
  #longestHeld = 0;
  #timer: NodeJS.Timeout | undefined;
  #expected = 0;
  /** The thread's CPU time and run-queue wait at the last tick, ms. */
  #cpuAt = 0;
  #waitAt = 0;
  #schedstat: number | undefined;
  readonly #schedBuffer = Buffer.alloc(96);
  /** Recent main-thread GC pauses (start, end), to tell a collector's pause from JavaScript's. */
  readonly #gcPauses: [number, number][] = [];
  #gcObserver: PerformanceObserver | undefined;

  constructor(options: EventLoopMonitorOptions = {}) {
    this.#stallMs = options.stallMs ?? 50;
    this.#resolutionMs = options.resolutionMs ?? 10;
    this.#recentCap = options.recent ?? 20;
    this.#onStall = options.onStall;
    this.#snapshot = options.snapshot;
    this.#histogram = monitorEventLoopDelay({ resolution: this.#resolutionMs });
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#histogram.enable();
    this.#gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.#gcPauses.push([e.startTime, e.startTime + e.duration]);
      if (this.#gcPauses.length > 64) this.#gcPauses.splice(0, this.#gcPauses.length - 64);
    });
    this.#gcObserver.observe({ entryTypes: ['gc'] });
    try {
      // Opened on the event loop's thread, so it names that thread whoever reads it later.
      this.#schedstat = process.platform === 'linux' ? openSync('/proc/thread-self/schedstat', 'r') : undefined;
    } catch {
      this.#schedstat = undefined;
    }
    this.#cpuAt = this.#cpuMs();
    this.#waitAt = this.#runQueueMs();
    this.#expected = performance.now() + this.#resolutionMs;
    // One repeating timer (no allocation per tick); never keeps the process alive.
    this.#timer = setInterval(() => this.#tick(), this.#resolutionMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#histogram.disable();
    this.#gcObserver?.disconnect();
    if (this.#schedstat !== undefined) closeSync(this.#schedstat);
    this.#schedstat = undefined;
  }

  #cpuMs(): number {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  }

  /** The thread's total wait in the run queue, ms (schedstat's second field, ns); 0 where unknown. */
  #runQueueMs(): number {
    if (this.#schedstat === undefined) return 0;
    try {
      const n = readSync(this.#schedstat, this.#schedBuffer, 0, this.#schedBuffer.length, 0);
      const text = this.#schedBuffer.toString('latin1', 0, n);
      const first = text.indexOf(' ');
      return Number(text.slice(first + 1, text.indexOf(' ', first + 1))) / 1e6;
    } catch {
      return 0;
    }
  }

  #tick(): void {
    const now = performance.now();
    const late = now - this.#expected;
    this.#expected = now + this.#resolutionMs;
    const cpuWas = this.#cpuAt;
    const waitWas = this.#waitAt;
    this.#cpuAt = this.#cpuMs();
    this.#waitAt = this.#runQueueMs();
    if (late <= this.#stallMs) return;
    // Since the last tick: the CPU used and the run-queue wait cover the interval as well as the lateness.
    const cpu = this.#cpuAt - cpuWas;
    const waited = this.#waitAt - waitWas;
    const held = this.#schedstat === undefined ? Math.min(late, cpu) : Math.max(0, late - waited);
    // What was in flight is taken now: the request that held the loop may be answered within this turn.
    const snapshot = this.#snapshot?.();
    // Recorded one turn later: the GC entries of the stall reach the observer by then.
    setImmediate(() => this.#record(now - late, now, held, cpu, snapshot));
  }

  #record(from: number, to: number, held: number, cpu: number, snapshot: unknown): void {
    let gc = 0;
    for (const [start, end] of this.#gcPauses) gc += Math.max(0, Math.min(end, to) - Math.max(start, from));
    const stall: EventLoopStall = { ended_at_ms: Math.round(performance.timeOrigin + to), ms: Math.round(to - from), held_ms: Math.round(held), cpu_ms: Math.round(cpu), gc_ms: Math.round(gc) };
    this.#stalls++;
    this.#longest = Math.max(this.#longest, stall.ms);
    this.#longestHeld = Math.max(this.#longestHeld, stall.held_ms);
    if (held > this.#stallMs) {
      this.#heldStalls++;
      this.#recent.push(stall);
      if (this.#recent.length > this.#recentCap) this.#recent.shift();
    }
    this.#onStall?.(stall, snapshot);
  }

  health(): EventLoopHealth {
    const h = this.#histogram;
    // The histogram records, in nanoseconds, the whole time between two of its timer's firings,
    // so an idle loop reads `resolutionMs`; what is reported is the delay beyond it. Before its
    // first sample its figures are 0 or NaN.
    const ms = (ns: number) => (Number.isFinite(ns) && h.count > 0 ? Math.max(0, round1(ns / 1e6 - this.#resolutionMs)) : 0);
    return {
      delay_ms: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) },
      stall_threshold_ms: this.#stallMs,
      stalls: this.#stalls,
      longest_stall_ms: this.#longest,
      held_stalls: this.#heldStalls,
      longest_held_ms: this.#longestHeld,
      recent_held_stalls: [...this.#recent],
    };
  }
}

/** What a stall's log line names: the requests that were in flight while the loop was held. */
interface InFlight {
  method: string;
  path: string;
  bodyBytes: number | undefined;
  since: number;
}

/**
 * Starts a monitor whose stalls are logged at warn with the requests in flight then (method,
 * path without its query, declared body size, how long each had been running): a request that
 * holds the loop is among them. Stops when the app closes.
 */
export function installEventLoopMonitor(app: FastifyInstance, options: Omit<EventLoopMonitorOptions, 'onStall' | 'snapshot'> = {}): EventLoopMonitor {
  const inFlight = new Set<InFlight>();
  const monitorStallMs = options.stallMs ?? 50;
  const monitor = new EventLoopMonitor({
    ...options,
    snapshot: () => {
      const now = performance.now();
      return [...inFlight].slice(0, 16).map((r) => ({ method: r.method, path: r.path, body_bytes: r.bodyBytes, ms: Math.round(now - r.since) }));
    },
    onStall: (stall, inFlightThen) => {
      // Warn only for a held loop: waiting for a core is the machine's doing, not a request's.
      app.log[stall.held_ms > monitorStallMs ? 'warn' : 'debug'](
        { stall_ms: stall.ms, held_ms: stall.held_ms, cpu_ms: stall.cpu_ms, gc_ms: stall.gc_ms, in_flight: inFlightThen },
        `event loop stalled ${stall.ms} ms (held ${stall.held_ms} ms, the rest waiting for a core)`,
      );
    },
  });
  app.addHook('onRequest', async (request, reply) => {
    if (reply.raw.destroyed) return;
    const length = Number(request.headers['content-length']);
    const entry: InFlight = { method: request.method, path: (request.url.split('?')[0] ?? '').slice(0, 200), bodyBytes: Number.isFinite(length) ? length : undefined, since: performance.now() };
    inFlight.add(entry);
    reply.raw.once('close', () => inFlight.delete(entry));
  });
  app.addHook('onClose', async () => monitor.stop());
  monitor.start();
  return monitor;
}
