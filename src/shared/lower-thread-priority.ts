import { constants, setPriority } from 'node:os';

/**
 * Lowers the scheduling priority of the calling thread (a worker thread doing CPU work on a
 * client's behalf: a simulation, a large body's parse) below the event loop's.
 *
 * Why: on a machine with as many busy workers as cores, the event loop is just one more runnable
 * thread in Linux's fair scheduler. Measured on the 2-core development VM while a batch of four
 * 24-qubit solves ran and /health was polled every 50 ms: the event loop's thread waited for a
 * core 47–49 ms per second with the workers at nice 0, 14–19 ms per second at nice 10, and the
 * batch took the same time (4.8–5.1 s). At nice 10 a worker's share of a contended core is about
 * a tenth of a nice-0 thread's, so the event loop runs when it needs to and the workers still
 * get every cycle it leaves. (Other processes at nice 0 still compete with the event loop: on
 * the shared VM they made it wait 50–350 ms at a time, which no priority of ours removes.)
 *
 * Linux only: there setpriority(PRIO_PROCESS, 0) applies to the calling thread alone (and
 * threads it starts inherit it); elsewhere it would lower the whole process, event loop
 * included, so nothing is done. Failure (a sandbox that forbids it) changes nothing either.
 */
export function lowerThreadPriority(priority: number = constants.priority.PRIORITY_BELOW_NORMAL): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, priority);
  } catch {
    // Left at the inherited priority.
  }
}
