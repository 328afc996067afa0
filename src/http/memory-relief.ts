import type { FastifyInstance } from 'fastify';
import { memoryReducingGcFunction } from '../shared/memory-reducing-gc.ts';

/**
 * Gives memory back once the daemon goes idle after a burst (large bodies, big prompts).
 *
 * Measured (bench/memory-large-bodies.ts, 200 hostile 1–16 MB bodies): RSS went 195 → ~700 MB and
 * stayed at ~600 MB while idle. V8 only collects when JavaScript allocates, and its memory
 * reducer, which should shrink an idle heap, keeps judging the allocation rate "high" from the
 * last samples taken during the burst, so it waits forever: ~100 MB of dead objects, a new space
 * grown to 128 MB and ~100 MB of external strings and buffers stay. Even an ordinary full GC
 * leaves ~190 MB resident in V8's pool of free pages; only a memory-reducing GC releases it.
 *
 * So when no request has been in flight for `idleMs` and RSS has grown by `growthBytes` since
 * it last settled, run one memory-reducing full GC (what V8 does on a low-memory notification): 50–200 ms on the main thread (measured on 2 cores), taken while nothing is
 * waiting on it, at most once per `minIntervalMs`. A request that arrives during it waits that
 * long. RSS then settles 20–170 MB above where it started: blocks glibc keeps in its heap for
 * reuse, which only malloc_trim (not reachable from JavaScript) would return.
 */
export interface MemoryReliefOptions {
  /** How long no request must be in flight before memory is given back, ms. */
  idleMs?: number;
  /** RSS growth since it last settled that is worth a GC pause, bytes. */
  growthBytes?: number;
  /** Least time between two reliefs, ms (bounds the GC time a bursty client can cause). */
  minIntervalMs?: number;
}

export function installMemoryRelief(app: FastifyInstance, options: MemoryReliefOptions = {}): void {
  const idleMs = options.idleMs ?? 2_000;
  const growthBytes = options.growthBytes ?? 64 * 1024 * 1024;
  const minIntervalMs = options.minIntervalMs ?? 10_000;
  let inFlight = 0;
  let idleSince = 0;
  let timer: NodeJS.Timeout | undefined;
  // RSS, not V8's heap figures: after a burst heapTotal may already be back down while V8 keeps
  // its freed pages pooled and resident, which only this GC returns. Growth V8 cannot give back
  // (a model's weights paged in) costs one needless relief, after which RSS settles there.
  const rss = () => process.memoryUsage.rss();
  // The lowest RSS seen at an idle check since the last relief: what the process settles at.
  let settled = rss();
  let lastRelief = Number.NEGATIVE_INFINITY;

  const check = () => {
    timer = undefined;
    if (inFlight > 0) return;
    const now = performance.now();
    const waitMore = Math.max(idleMs - (now - idleSince), minIntervalMs - (now - lastRelief));
    if (waitMore > 0) {
      timer = setTimeout(check, waitMore).unref();
      return;
    }
    const before = rss();
    settled = Math.min(settled, before);
    if (before - settled < growthBytes) return;
    const gc = memoryReducingGcFunction();
    if (gc === null) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    lastRelief = performance.now();
    settled = rss();
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    app.log.debug({ rssBeforeMb: mb(before), rssAfterMb: mb(settled), ms: Math.round(lastRelief - now) }, 'memory relief: idle after growth, ran a memory-reducing GC');
  };

  app.addHook('onRequest', async (_request, reply) => {
    // A client already gone has had its 'close'; counting it would hold "in flight" up forever.
    if (reply.raw.destroyed) return;
    inFlight++;
    // 'close' fires once the response is sent or its connection is gone, whatever happened.
    reply.raw.once('close', () => {
      if (--inFlight > 0) return;
      idleSince = performance.now();
      timer ??= setTimeout(check, idleMs).unref();
    });
  });
  app.addHook('onClose', async () => {
    clearTimeout(timer);
  });
}
