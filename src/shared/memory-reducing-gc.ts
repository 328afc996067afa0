import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's memory-reducing full GC, for the thread that calls it (the event loop or a worker).
 *
 * V8 collects when JavaScript allocates; a thread that goes quiet after a burst keeps what the
 * burst left (dead objects, its grown new space, freed pages it pools, and every ArrayBuffer
 * only a dead object still held: a solve worker's 256 MB state vectors), because its memory
 * reducer keeps judging the allocation rate by the burst and waits forever.
 */
type GcOptions = { type: 'major'; execution: 'sync'; flavor: 'last-resort' };
export type MemoryReducingGc = (options: GcOptions) => void;
let memoryReducingGc: MemoryReducingGc | null | undefined;

/**
 * V8's gc() without starting the process with --expose-gc: a context created while the flag is
 * set gets the function; the flag is then cleared, so no other context (other threads, the main
 * one) gains a global `gc`. `flavor: 'last-resort'` is V8's CollectAllAvailableGarbage: full GCs
 * that reduce the footprint (shrink the new space, free the page pool). One per thread (each
 * isolate gets its own). Null where the runtime refuses (nothing is then given back).
 */
export function memoryReducingGcFunction(): MemoryReducingGc | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as MemoryReducingGc; // started with --expose-gc: leave the flag alone
  if (memoryReducingGc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('typeof gc === "function" ? gc : null');
      memoryReducingGc = typeof gc === 'function' ? (gc as MemoryReducingGc) : null;
    } catch {
      memoryReducingGc = null;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return memoryReducingGc;
}

/** Runs one memory-reducing GC on this thread; false where none is available. */
export function reduceMemoryNow(): boolean {
  const gc = memoryReducingGcFunction();
  if (gc === null) return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}

/**
 * For a worker thread: `touch()` after each piece of work; once `ms` pass without another, one
 * memory-reducing GC runs on the worker's own thread (never the event loop's), so what the work
 * left is given back while the worker waits. The timer never keeps a process alive.
 */
export function reduceMemoryWhenIdle(ms: number): { touch(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    touch() {
      if (timer !== undefined) timer.refresh();
      else timer = setTimeout(() => {
        timer = undefined;
        reduceMemoryNow();
      }, ms).unref();
    },
  };
}
