/**
 * Preloaded into the daemon by bench/memory-large-bodies.ts (`NODE_OPTIONS=--import=…`), never
 * by the daemon itself: prints the main thread's memory figures to stderr every 250 ms, so the
 * bench sees the heap and external memory next to the RSS it reads from /proc, without a
 * patch to src/. With `--expose-gc` in NODE_OPTIONS, SIGUSR2 runs a full GC (to tell garbage
 * waiting for a collection from memory that is really held). PROBE_V8_FLAGS="--trace-gc …" sets
 * V8 flags that NODE_OPTIONS does not accept.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  // V8 flags NODE_OPTIONS refuses (--trace-gc, --trace-memory-reducer), for investigations.
  const flags = process.env.PROBE_V8_FLAGS;
  if (flags !== undefined) for (const flag of flags.split(/[ ,]/)) setFlagsFromString(flag);
  const MB = 1024 * 1024;
  const timer = setInterval(() => {
    if (process.env.PROBE_SILENT !== undefined) return;
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / MB)]));
    const line = {
      t: Date.now(),
      rss: Math.round(m.rss / MB),
      heapTotal: Math.round(m.heapTotal / MB),
      heapUsed: Math.round(m.heapUsed / MB),
      external: Math.round(m.external / MB),
      arrayBuffers: Math.round(m.arrayBuffers / MB),
      spaces,
    };
    process.stderr.write(`@@mem ${JSON.stringify(line)}\n`);
  }, 250);
  timer.unref();
  // PROBE_GC=last-resort: the memory-reducing full GC V8 runs before giving up on an allocation.
  const gc = (globalThis as { gc?: (options?: object) => void }).gc;
  const flavor = process.env.PROBE_GC ?? 'regular';
  if (gc !== undefined) process.on('SIGUSR2', () => gc({ type: 'major', execution: 'sync', flavor }));
}
