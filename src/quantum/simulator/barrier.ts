/**
 * Shared control block for a team of threads working on one state vector: Int32 slots for the
 * barrier arrival count and generation, an error flag, a ready count and the chunk counter.
 */
export const CTL_COUNT = 0;
export const CTL_GENERATION = 1;
export const CTL_ERROR = 2;
export const CTL_READY = 3;
/** Next chunk to claim in the current pass (reset by the last thread through each barrier). */
export const CTL_NEXT = 4;
const INT_SLOTS = 8;

export function createTeamControl(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(INT_SLOTS * 4));
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
      Atomics.store(ctl, CTL_NEXT, 0);
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

/** Chunk claiming and barrier for one member of a team sharing `ctl`. */
export function teamSync(ctl: Int32Array, parties: number): { next(): number; barrier(): void } {
  return { next: () => Atomics.add(ctl, CTL_NEXT, 1), barrier: makeBarrier(ctl, parties) };
}
