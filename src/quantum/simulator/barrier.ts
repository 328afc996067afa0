/**
 * Shared control block for a team of threads working on one state vector.
 * Int32 slots: barrier arrival count, barrier generation, error flag, ready count; then one
 * Float64 slot per thread for partial results.
 */
export const CTL_COUNT = 0;
export const CTL_GENERATION = 1;
export const CTL_ERROR = 2;
export const CTL_READY = 3;
const INT_SLOTS = 8;

export interface TeamControl {
  readonly buffer: SharedArrayBuffer;
  readonly ctl: Int32Array;
  readonly partials: Float64Array;
}

export function createTeamControl(threads: number): TeamControl {
  const buffer = new SharedArrayBuffer(INT_SLOTS * 4 + threads * 8);
  return openTeamControl(buffer, threads);
}

export function openTeamControl(buffer: SharedArrayBuffer, threads: number): TeamControl {
  return {
    buffer,
    ctl: new Int32Array(buffer, 0, INT_SLOTS),
    partials: new Float64Array(buffer, INT_SLOTS * 4, threads),
  };
}

/** Raised in the waiting threads when another thread of the team failed. */
export class TeamFailedError extends Error {
  constructor() {
    super('a simulator worker thread failed; the evaluation was abandoned');
    this.name = 'TeamFailedError';
  }
}

/**
 * A reusable generation barrier for `parties` threads (Atomics.wait/notify). The last thread to
 * arrive resets the count before bumping the generation, so nobody can re-enter early.
 * Waiters spin briefly (passes are short at small n), then sleep; they give up with
 * TeamFailedError when the error flag is raised.
 */
export function makeBarrier(ctl: Int32Array, parties: number): () => void {
  return () => {
    const generation = Atomics.load(ctl, CTL_GENERATION);
    if (Atomics.add(ctl, CTL_COUNT, 1) === parties - 1) {
      Atomics.store(ctl, CTL_COUNT, 0);
      Atomics.add(ctl, CTL_GENERATION, 1);
      Atomics.notify(ctl, CTL_GENERATION);
      return;
    }
    let spins = 0;
    while (Atomics.load(ctl, CTL_GENERATION) === generation) {
      if (Atomics.load(ctl, CTL_ERROR) !== 0) throw new TeamFailedError();
      if (spins < 2000) {
        spins++;
        continue;
      }
      Atomics.wait(ctl, CTL_GENERATION, generation, 200);
    }
  };
}

/** Flags a failure and wakes every waiter. */
export function raiseTeamError(ctl: Int32Array): void {
  Atomics.store(ctl, CTL_ERROR, 1);
  Atomics.add(ctl, CTL_GENERATION, 0);
  Atomics.notify(ctl, CTL_GENERATION);
}
