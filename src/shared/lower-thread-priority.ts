import { constants, setPriority } from 'node:os';

/**
 * Lowers the scheduling priority of the calling thread (a worker thread doing CPU work on a
 * client's behalf: a simulation, a large body's parse) below the event loop's.
 *
 * Why: on a machine with as many busy workers as cores, the event loop is just one more runnable
 * thread, and Linux's fair scheduler let it wait 50–350 ms for a core while two solve workers
 * ran (measured on the 2-core development VM: a batch of 24-qubit solves held `/health` that
 * long, with the event loop itself idle). At nice 10 a worker's share of a contended core is
 * about a tenth of a nice-0 thread's, so the event loop runs when it needs to and the workers
 * still get every cycle it leaves.
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
