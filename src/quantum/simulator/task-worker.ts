/**
 * A SimulatorPool worker: imports the requested module, calls the named export with the
 * arguments, and posts back the (structured-cloned) result or a serialised error.
 */
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../../shared/lower-thread-priority.ts';
import { serializeError } from './worker-errors.ts';

interface TaskMessage {
  id: number;
  module: string;
  exportName: string;
  args: unknown[];
}

// Simulation work, below the event loop (lower-thread-priority.ts).
lowerThreadPriority();

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
  })();
});
