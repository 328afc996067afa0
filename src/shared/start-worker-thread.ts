import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { QueueWorker, QueueWorkerEvents } from './worker-queue.ts';

export interface WorkerThreadOptions {
  /** Names the thread in the error its exit is reported with (`<name> worker exited with code 1`). */
  name: string;
  /**
   * V8 limits of the thread's heap. Past them V8 stops the thread, which reports an Error whose
   * `code` is ERR_WORKER_OUT_OF_MEMORY; state held in typed arrays or native memory is not counted.
   */
  resourceLimits?: ResourceLimits;
}

/**
 * A worker thread running `script`, as a WorkerQueue drives it. An 'error' (an uncaught throw,
 * its heap limit) or an exit is reported as `died`, whichever comes first (Node emits both).
 */
export function startWorkerThread<Reply>(script: URL, options: WorkerThreadOptions, events: QueueWorkerEvents<Reply>): QueueWorker {
  const worker = new Worker(script, options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits });
  worker.on('message', (reply: Reply) => events.reply(reply));
  worker.on('error', (error) => events.died(error));
  worker.on('exit', (code) => events.died(new Error(`${options.name} worker exited with code ${code}`)));
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    hold: (held) => (held ? worker.ref() : worker.unref()),
    stop: async () => {
      worker.removeAllListeners();
      // An 'error' a dying thread still emits must not become an uncaught exception.
      worker.on('error', () => undefined);
      await worker.terminate();
    },
  };
}
