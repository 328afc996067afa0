/**
 * A SimulatorPool worker: imports the requested module, calls the named export with the
 * arguments, and posts back the (structured-cloned) result or a serialised error.
 */
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../../shared/lower-thread-priority.ts';
import { reduceMemoryWhenIdle } from '../../shared/memory-reducing-gc.ts';
import { serializeError } from './worker-errors.ts';
import { SIMULATOR_IDLE_RELEASE_MS } from './idle-release.ts';

interface TaskMessage {
  id: number;
  module: string;
  exportName: string;
  args: unknown[];
}

// Simulation work, below the event loop (lower-thread-priority.ts).
lowerThreadPriority();
// What a task left (state vectors) given back once idle, after the simulator's own idle release too.
const releaseSoon = reduceMemoryWhenIdle(2_000);
const releaseLater = reduceMemoryWhenIdle(SIMULATOR_IDLE_RELEASE_MS + 1_000);

parentPort!.on('message', (msg: TaskMessage) => {
  void (async () => {
    try {
      const mod = (await import(msg.module)) as Record<string, unknown>;
      const fn = mod[msg.exportName];
      if (typeof fn !== 'function') throw new TypeError(`${msg.module} has no function export "${msg.exportName}"`);
      const value: unknown = await (fn as (...a: unknown[]) => unknown)(...msg.args);
      parentPort!.postMessage({ id: msg.id, ok: true, value });
    } catch (err) {
      parentPort!.postMessage({ id: msg.id, ok: false, error: serializeError(err) });
    }
    releaseSoon.touch();
    releaseLater.touch();
  })();
});
