/**
 * Helper thread of a QaoaTeam (parallel.ts): receives a job (typed arrays on shared memory),
 * claims chunks of each pass in lock-step with the caller through the shared counter and barrier.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../../shared/lower-thread-priority.ts';
import { reduceMemoryWhenIdle } from '../../shared/memory-reducing-gc.ts';
import { CTL_READY, raiseTeamError, teamSync } from './barrier.ts';
import { runQaoaShare } from './qaoa-kernel.ts';
import type { QaoaJob } from './qaoa-kernel.ts';

interface TeamMessage {
  job: QaoaJob;
  threads: number;
}

// As the solve worker that leads the team (lower-thread-priority.ts).
lowerThreadPriority();
// A job's shared state vectors stay allocated while any thread's heap still holds them: give them back once idle.
const releaseWhenIdle = reduceMemoryWhenIdle(2_000);

const { ctl } = workerData as { ctl: Int32Array };

parentPort!.on('message', (msg: TeamMessage) => {
  try {
    runQaoaShare(msg.job, teamSync(ctl, msg.threads));
    releaseWhenIdle.touch();
  } catch (err) {
    raiseTeamError(ctl);
    if (!(err instanceof Error && err.name === 'TeamFailedError')) throw err;
  }
});

Atomics.add(ctl, CTL_READY, 1);
Atomics.notify(ctl, CTL_READY);
