/**
 * The OffThread worker: runs the named export of one of svc's modules and posts back its
 * result, an ApiError by value, or (anything else) a detail for the log.
 */
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from './lower-thread-priority.ts';
import { transferListOf, type OffThreadTask } from './off-thread.ts';
import { failedTaskReply, type TaskReply } from './task-reply.ts';

// Below the event loop: parsing a client's 16 MB body must not keep others from being answered.
lowerThreadPriority();

parentPort!.on('message', (task: OffThreadTask) => {
  void (async () => {
    let reply: TaskReply;
    try {
      const mod = (await import(task.module)) as Record<string, unknown>;
      const fn = Object.hasOwn(mod, task.exportName) ? mod[task.exportName] : undefined;
      if (typeof fn !== 'function') throw new TypeError(`${task.module} has no function export ${task.exportName}`);
      reply = { id: task.id, ok: true, value: await (fn as (...args: unknown[]) => unknown)(...task.args) };
    } catch (error) {
      reply = failedTaskReply(task.id, error);
    }
    // A byte array the task hands back (a body it checked) returns without a copy.
    parentPort!.postMessage(reply, reply.ok && reply.value instanceof Uint8Array ? transferListOf(reply.value) : []);
  })();
});
