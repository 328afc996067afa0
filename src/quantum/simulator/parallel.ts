import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createTeamControl, CTL_COUNT, CTL_ERROR, CTL_NEXT, CTL_READY, raiseTeamError, teamSync } from './barrier.ts';
import { runQaoaShare, sumPartials } from './qaoa-kernel.ts';
import type { QaoaJob } from './qaoa-kernel.ts';
import { siblingModule } from '../../shared/sibling-module.ts';

/** Below this many qubits the QAOA evaluation stays on the calling thread. */
export const PARALLEL_MIN_QUBITS = 16;
const READY_TIMEOUT_MS = 15_000;

/**
 * Threads used for large evaluations: SVC_SIM_THREADS when set, else the machine's available
 * parallelism, at most 16.
 */
export function defaultThreads(env: NodeJS.ProcessEnv = process.env): number {
  const raw = Number(env['SVC_SIM_THREADS']);
  if (Number.isInteger(raw) && raw >= 1) return Math.min(raw, 64);
  return Math.max(1, Math.min(availableParallelism(), 16));
}

/**
 * A team of `threads - 1` persistent helper workers plus the calling thread, sharing the state
 * vector through SharedArrayBuffers and synchronising with Atomics barriers. `run` is
 * synchronous: the caller does its own share of every pass (no idle thread, no copies), so it
 * blocks the calling thread like the single-threaded kernel does. Call it from a worker in a
 * server (as the solve service's workers do). Helpers are unref'd: they never keep a process alive.
 */
export class QaoaTeam {
  readonly threads: number;
  readonly #workers: Worker[];
  readonly #ctl: Int32Array;
  #broken = false;

  private constructor(threads: number) {
    this.threads = threads;
    this.#ctl = createTeamControl();
    this.#workers = [];
    for (let k = 1; k < threads; k++) {
      const worker = new Worker(siblingModule('./qaoa-team-worker', import.meta.url), {
        workerData: { ctl: this.#ctl },
      });
      worker.unref();
      worker.on('error', () => {
        this.#broken = true;
        raiseTeamError(this.#ctl);
      });
      worker.on('exit', () => {
        this.#broken = true;
      });
      this.#workers.push(worker);
    }
  }

  /** Starts the helpers and waits (blocking, bounded) until they are ready; null if they never are. */
  static start(threads: number): QaoaTeam | null {
    const team = new QaoaTeam(threads);
    const ctl = team.#ctl;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Atomics.load(ctl, CTL_READY) < threads - 1) {
      const seen = Atomics.load(ctl, CTL_READY);
      const left = deadline - Date.now();
      if (left <= 0 || team.#broken) {
        void team.close();
        return null;
      }
      Atomics.wait(ctl, CTL_READY, seen, Math.min(left, 100));
    }
    return team;
  }

  get usable(): boolean {
    return !this.#broken;
  }

  /**
   * Runs a QAOA job across the team. re, im, partials (and the diagonal, for speed) must be on
   * SharedArrayBuffers. Returns the expectation when job.expectation is set, else 0.
   */
  run(job: QaoaJob): number {
    if (this.#broken) throw new Error('QAOA team is not usable');
    if (!(job.re.buffer instanceof SharedArrayBuffer) || !(job.partials.buffer instanceof SharedArrayBuffer)) {
      throw new TypeError('a team job needs its state and partials on SharedArrayBuffers');
    }
    const ctl = this.#ctl;
    Atomics.store(ctl, CTL_COUNT, 0);
    Atomics.store(ctl, CTL_NEXT, 0);
    Atomics.store(ctl, CTL_ERROR, 0);
    for (const worker of this.#workers) worker.postMessage({ job, threads: this.threads });
    try {
      runQaoaShare(job, teamSync(ctl, this.threads));
    } catch (err) {
      this.#broken = true;
      raiseTeamError(ctl);
      void this.close();
      throw err;
    }
    return job.expectation ? sumPartials(job) : 0;
  }

  async close(): Promise<void> {
    this.#broken = true;
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}

let team: QaoaTeam | null = null;
let teamFailed = false;

/**
 * The calling thread's team for `threads` threads, started on first use (about 50 ms) and kept.
 * Returns null when workers cannot start here; callers then run single-threaded.
 */
export function getQaoaTeam(threads: number): QaoaTeam | null {
  if (threads < 2 || teamFailed) return null;
  if (team && team.usable && team.threads === threads) return team;
  if (team) void team.close();
  team = QaoaTeam.start(threads);
  if (!team) teamFailed = true;
  return team;
}

/** Stops the helper threads (they restart on the next parallel evaluation). */
export async function shutdownQaoaTeam(): Promise<void> {
  const t = team;
  team = null;
  teamFailed = false;
  if (t) await t.close();
}
