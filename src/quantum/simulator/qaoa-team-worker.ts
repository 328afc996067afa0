/**
 * Helper thread of a QaoaTeam (parallel.ts): receives a job (typed arrays on shared memory),
 * runs its share of the QAOA schedule in lock-step with the caller through the shared barrier,
 * and writes its partial expectation.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CTL_READY, makeBarrier, openTeamControl, raiseTeamError } from './barrier.ts';
import { runQaoaShare } from './qaoa-kernel.ts';
import type { QaoaJob } from './qaoa-kernel.ts';

interface TeamMessage {
  job: QaoaJob;
  thread: number;
  threads: number;
}

const { buffer, threads } = workerData as { buffer: SharedArrayBuffer; threads: number };
const { ctl, partials } = openTeamControl(buffer, threads);

parentPort!.on('message', (msg: TeamMessage) => {
  const barrier = makeBarrier(ctl, msg.threads);
  try {
    partials[msg.thread] = runQaoaShare(msg.job, msg.thread, msg.threads, barrier);
    barrier();
  } catch (err) {
    raiseTeamError(ctl);
    if (!(err instanceof Error && err.name === 'TeamFailedError')) throw err;
  }
});

Atomics.add(ctl, CTL_READY, 1);
Atomics.notify(ctl, CTL_READY);
