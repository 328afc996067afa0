import { availableParallelism } from 'node:os';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { GROVER_MAX_QUBITS } from './solvers/grover-search.ts';
import { QRNG_MAX_QUBITS } from './solvers/grover-qrng.ts';
import { MAX_QAOA_STOPS } from './solvers/qaoa-route.ts';
import { QSVM_MAX_QUBITS } from './solvers/qsvm-classification.ts';
import { portfolioQaoaCeiling } from './solvers/qubo-portfolio.ts';
import { maxQubits } from './simulator/memory-guard.ts';
import { OffThread, transferListOf } from '../shared/off-thread.ts';
import { startWorkerThread } from '../shared/start-worker-thread.ts';
import { taskReplyValue } from '../shared/task-reply.ts';
import { WorkerQueue } from '../shared/worker-queue.ts';
import { batchItems, isRejected, type ItemErrorBody, type ItemResult } from './batch-results.ts';
import { prepareSolve, RawJsonBody, type PreparedSolve, type SerializedProblem, type SolveKind } from './solve-intake.ts';
import {
  MAX_FEATURES,
  SOLVER_NAMES,
  type BatchResponse,
  type SolveMeta,
  type SolveResponse,
  type Substrate,
} from './solve-schemas.ts';
import type { WorkerReply, WorkerRequest } from './solve-worker.ts';
import type { RunOptions, ValidatedProblem } from './solvers/registry.ts';
import { siblingModule } from '../shared/sibling-module.ts';

const INTAKE_MODULE = siblingModule('./solve-intake', import.meta.url);

/**
 * The solve service: validates solve and batch requests against the contract and runs each
 * problem on a pool of worker threads (one per core by default), so the daemon's event loop
 * stays free while a large simulation runs. Work beyond the pool waits in a bounded queue;
 * a request that does not fit gets 429 with Retry-After. A batch is admitted whole or not at
 * all, its problems run in parallel across the pool and come back in request order.
 *
 * `vendor-eagle` problems go to the hardware substrate instead (src/quantum/hardware): 503
 * unless a provider is configured.
 */
export interface SolveServiceOptions {
  /** Worker threads; default: the machine's available parallelism. */
  workers?: number;
  /** Problems that may wait for a worker beyond those running; default 4 per worker. */
  maxQueue?: number;
  /** A problem running longer is stopped (its worker replaced) and answered 422 `solve_time_budget_exceeded`; default 120 s. */
  jobTimeoutMs?: number;
  /**
   * V8 heap ceiling of each solve worker in MiB (its JavaScript objects; state vectors are
   * typed arrays outside it, bounded by the simulator's memory guard). A solve that needs more
   * stops its worker, which is replaced, and is answered 422 `problem_too_large`. Default: V8's.
   */
  workerHeapMb?: number;
  /** Where large bodies are parsed and validated; default: an intake worker of the service's own. */
  offThread?: OffThread;
  /** The `vendor-eagle` hardware substrate; default: none configured (503 `substrate_unavailable`). */
  hardware?: HardwareSubstrate;
}

/**
 * The hardware substrate, consulted only for a request that names `vendor-eagle` and has passed
 * the caller's guard (the hosted tier's enterprise check). ProviderHardware
 * (hardware/hardware-substrate.ts) is the implementation.
 */
export interface HardwareSubstrate {
  readonly status: 'configured' | 'not_configured';
  /** Throws the ApiError to answer: 503 `substrate_unavailable` (naming what is missing), 422 for a problem hardware cannot take, 429 when its queue is full. */
  admit(problems: readonly (ValidatedProblem | SerializedProblem)[]): void;
  /** Runs one admitted problem (queued behind earlier ones). */
  run(problem: ValidatedProblem | SerializedProblem, shots: number, seed: number | undefined, signal?: AbortSignal): Promise<{ solution: Record<string, unknown>; meta: SolveMeta }>;
  close?(): Promise<void>;
}

/** Per request: checked after the body is validated, before the substrate or the queue is consulted. */
export interface SolveCallOptions {
  /** Throws (an ApiError) to refuse this substrate for this caller: e.g. 403 without an enterprise plan. */
  guard?: (substrate: Substrate) => void;
  /** How a failed batch item's error is written (the face's envelope; default the local runtime's). */
  itemError?: ItemErrorBody;
  /** Told the solver's name once the body is validated, before anything can refuse it. */
  onSolver?: (solver: string) => void;
  /** Aborted when the caller is gone: hardware items still queued are skipped and a running provider job is cancelled. */
  signal?: AbortSignal;
  /**
   * Aborted to cancel (a solve job's DELETE): local problems waiting leave the pool and running
   * ones have their worker thread stopped; the solve then fails with the signal's reason.
   * Hardware problems follow `signal`, so a job passes the same signal as both.
   */
  stop?: AbortSignal;
  /** Told each time a problem of the request settles (a job's progress), with how many have. */
  onProblemSettled?: (settled: number, total: number) => void;
}

function substrateUnavailable(): ApiError {
  return new ApiError({
    status: 503,
    type: 'server_error',
    code: 'substrate_unavailable',
    param: 'substrate',
    message:
      "The 'vendor-eagle' hardware substrate is unavailable: it needs a hardware provider and an enterprise plan, " +
      "and none is configured on this runtime. Retry with substrate 'local' (the simulator).",
  });
}

export const UNCONFIGURED_HARDWARE: HardwareSubstrate = {
  status: 'not_configured',
  admit() {
    throw substrateUnavailable();
  },
  run() {
    return Promise.reject(substrateUnavailable());
  },
};

export interface SolverCapability {
  solvers: string[];
  substrate: 'simulated';
  substrates: { local: 'available'; 'vendor-eagle': 'configured' | 'not_configured' };
  /** The simulator's memory ceiling on this machine. */
  max_qubits: number;
  /** What each solver actually simulates at most (beyond: a labelled classical method or a 422). */
  solver_max_qubits: Record<string, number>;
  workers: number;
}

/**
 * The most qubits each solver simulates: QAOA routes m² for m ≤ MAX_QAOA_STOPS stops, QUBO one
 * per asset (24, memory permitting), Grover ⌈log2 N⌉ up to its ceiling, QRNG its register, qkmeans the swap test on
 * 2·⌈log2 64⌉ + 1 qubits (64 features at most), qsvm one per feature. Capped by the simulator.
 */
export function solverMaxQubits(): Record<string, number> {
  const cap = maxQubits();
  const ceilings = {
    qaoa: MAX_QAOA_STOPS * MAX_QAOA_STOPS,
    qubo: portfolioQaoaCeiling(),
    grover: GROVER_MAX_QUBITS,
    grover_qrng: QRNG_MAX_QUBITS,
    qkmeans: 2 * Math.ceil(Math.log2(MAX_FEATURES)) + 1,
    qsvm: QSVM_MAX_QUBITS,
  };
  return Object.fromEntries(Object.entries(ceilings).map(([k, v]) => [k, Math.min(v, cap)]));
}

/** What `/health` reports under `quantum`: the solvers, the substrate and this machine's qubit ceiling. */
export function solverCapability(workers = availableParallelism(), hardware: HardwareSubstrate['status'] = 'not_configured'): SolverCapability {
  return {
    solvers: [...SOLVER_NAMES],
    substrate: 'simulated',
    substrates: { local: 'available', 'vendor-eagle': hardware },
    max_qubits: maxQubits(),
    solver_max_qubits: solverMaxQubits(),
    workers,
  };
}

/** A problem for the pool; `started` is when a worker got it, for the run-time average behind Retry-After. */
interface SolveTask {
  validated: ValidatedProblem | SerializedProblem;
  options: RunOptions;
  started?: number;
}

type SolveResult = { solution: Record<string, unknown>; meta: SolveMeta };

const shuttingDown = () => ApiError.busy('The solve service is shutting down.', 5, 503, 'shutting_down');

export class SolveService {
  readonly workers: number;
  readonly maxQueue: number;
  readonly jobTimeoutMs: number;
  readonly workerHeapMb: number | undefined;
  readonly #offThread: OffThread;
  readonly #ownsOffThread: boolean;
  readonly #hardware: HardwareSubstrate;
  /** The solve workers: `workers` threads, and `maxQueue` problems waiting beyond those running. */
  readonly #pool: WorkerQueue<SolveTask, WorkerReply, SolveResult>;
  /** Set when close() begins: new problems are refused while the intake and the substrate close. */
  #closing = false;
  /** Moving average of problem run time, for Retry-After. */
  #averageMs = 1000;

  constructor(options: SolveServiceOptions = {}) {
    this.workers = Math.max(1, Math.floor(options.workers ?? availableParallelism()));
    this.maxQueue = Math.max(0, Math.floor(options.maxQueue ?? 4 * this.workers));
    this.jobTimeoutMs = options.jobTimeoutMs ?? 120_000;
    this.workerHeapMb = options.workerHeapMb;
    this.#ownsOffThread = options.offThread === undefined;
    this.#offThread = options.offThread ?? new OffThread();
    this.#hardware = options.hardware ?? UNCONFIGURED_HARDWARE;
    this.#pool = this.#createPool();
  }

  capability(): SolverCapability {
    return solverCapability(this.workers, this.#hardware.status);
  }

  /** Problems running and waiting now. */
  get load(): { running: number; queued: number } {
    return { running: this.#pool.running, queued: this.#pool.waiting };
  }

  /** `POST /api/solve`. With `batch: true` the problem is an array and the answer a batch response. */
  solve(body: unknown, call: SolveCallOptions = {}): Promise<SolveResponse | BatchResponse> {
    return this.#serve(body, 'solve', call);
  }

  /** `POST /api/solve/batch`. */
  solveBatch(body: unknown, call: SolveCallOptions = {}): Promise<BatchResponse> {
    return this.#serve(body, 'batch', call) as Promise<BatchResponse>;
  }

  async #serve(body: unknown, kind: SolveKind, call: SolveCallOptions): Promise<SolveResponse | BatchResponse> {
    // A parsed body is admitted at once (no await before #run), so load figures are current on return.
    const prepared = this.#intake(body, kind);
    return this.#run(prepared instanceof Promise ? await prepared : prepared, call);
  }

  /**
   * Intake alone, for a solve job's submission: what is wrong with the request is answered now
   * (400, 413, 422, the caller's guard, 503 for an unconfigured hardware substrate), before it
   * waits in a queue. Nothing runs. A raw body's bytes are handed to the intake worker: copy
   * them first if they are needed again.
   */
  async check(body: unknown, call: Pick<SolveCallOptions, 'guard' | 'onSolver'> = {}): Promise<{ solver: string; substrate: Substrate; problems: number; batch: boolean }> {
    const prepared = this.#intake(body, 'solve');
    const { solver, substrate, problems, batch } = prepared instanceof Promise ? await prepared : prepared;
    call.onSolver?.(solver);
    call.guard?.(substrate);
    if (substrate === 'vendor-eagle' && this.#hardware.status === 'not_configured') this.#hardware.admit([]);
    const first = problems[0]!;
    if (!batch && isRejected(first)) throw new ApiError(first.rejected);
    return { solver, substrate, problems: problems.length, batch };
  }

  /** Starts every worker now (a daemon calls this at start, so the first solve does not pay for it). */
  warm(): void {
    if (!this.#closing) this.#pool.warm();
  }

  /**
   * Refuses new problems at once, closes the intake and the hardware substrate, then stops the
   * workers: problems still running or queued by then fail with 503 (one that finishes while the
   * rest closes is answered).
   */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#ownsOffThread) await this.#offThread.close();
    await this.#hardware.close?.();
    await this.#pool.close();
  }

  /**
   * Parsed bodies are checked here; a large body arrives as raw bytes (see solve-routes.ts) and
   * is parsed and checked on the intake worker, off the event loop.
   */
  #intake(body: unknown, kind: SolveKind): PreparedSolve<ValidatedProblem | SerializedProblem> | Promise<PreparedSolve<SerializedProblem>> {
    if (!(body instanceof RawJsonBody)) return prepareSolve(body, kind);
    // The bytes are not needed here again: hand the memory over instead of copying it.
    return this.#offThread.run(INTAKE_MODULE, 'prepareSolveJson', [body.bytes, kind], transferListOf(body.bytes));
  }

  async #run(request: PreparedSolve<ValidatedProblem | SerializedProblem>, call: SolveCallOptions): Promise<SolveResponse | BatchResponse> {
    const started = performance.now();
    const { solver, substrate, shots, seed, field, problems } = request;
    call.onSolver?.(solver);
    call.guard?.(substrate);
    // Every problem is admitted before any runs, so none is left behind by a refusal.
    const hardware = substrate === 'vendor-eagle';
    const runnable = problems.filter((p) => !isRejected(p)) as (ValidatedProblem | SerializedProblem)[];
    if (hardware) this.#hardware.admit(runnable);
    else this.#admit(runnable.length);
    // vendor-eagle problems go through the hardware lane (queued, one job at a time), the others to the pool.
    // Problems intake refused are settled already (they are answered in place).
    let settled = problems.length - runnable.length;
    const counted = <T>(run: Promise<T>): Promise<T> => {
      if (call.onProblemSettled === undefined) return run;
      const tell = () => call.onProblemSettled?.(++settled, problems.length);
      run.then(tell, tell);
      return run;
    };
    const submit = hardware
      ? (v: ValidatedProblem | SerializedProblem, o: RunOptions) => counted(this.#hardware.run(v, o.shots, o.seed, call.signal))
      : (v: ValidatedProblem | SerializedProblem, o: RunOptions) => counted(this.#submit(v, o, call.stop));
    if (!request.batch) {
      const problem = problems[0]!;
      if (isRejected(problem)) throw new ApiError(problem.rejected);
      const result = await submit(problem, { shots, seed });
      return {
        id: newId('qj_'),
        solver,
        substrate,
        status: 'completed',
        solution: result.solution,
        meta: result.meta,
        ...(seed === undefined ? {} : { seed }),
      };
    }
    // Several problems share the pool: one simulator thread each, so they do not fight over the cores.
    const threads = problems.length > 1 ? 1 : undefined;
    // Each problem settles on its own: a failed one is answered in its place while the others complete.
    const outcomes = await Promise.all(
      problems.map(async (v, i) => (isRejected(v) ? v : settle(submit(v, { shots, threads, seed: seed === undefined ? undefined : (seed + i) % 2 ** 32 })))),
    );
    const { results, counts } = batchItems(outcomes, field, call.itemError);
    return {
      id: newId('qb_'),
      solver,
      substrate,
      status: 'completed',
      results,
      request_counts: counts,
      total_elapsed_ms: Math.round(performance.now() - started),
      ...(seed === undefined ? {} : { seed }),
    };
  }

  /** Refuses with 429 unless `count` problems can start or wait now. */
  #admit(count: number): void {
    if (this.#closing || this.#pool.closed) throw shuttingDown();
    if (count > this.#pool.room) throw this.#queueFull();
  }

  #queueFull(): ApiError {
    const { running, queued } = this.load;
    const seconds = Math.max(1, Math.ceil((this.#averageMs * Math.ceil((queued + running) / this.workers)) / 1000));
    return ApiError.busy(
      `The local solve queue is full (${running} running, ${queued} waiting, room for ${this.maxQueue}). Retry after ${seconds} s.`,
      seconds,
      429,
      'solve_queue_full',
    );
  }

  #submit(validated: ValidatedProblem | SerializedProblem, options: RunOptions, stop?: AbortSignal): Promise<SolveResult> {
    if (this.#closing) return Promise.reject(shuttingDown());
    return this.#pool.run({ validated, options }, this.jobTimeoutMs, stop);
  }

  #createPool(): WorkerQueue<SolveTask, WorkerReply, SolveResult> {
    const resourceLimits = this.workerHeapMb === undefined ? undefined : { maxOldGenerationSizeMb: this.workerHeapMb };
    const heap = this.workerHeapMb === undefined ? "V8's default heap limit" : `${this.workerHeapMb} MiB of heap`;
    return new WorkerQueue({
      size: this.workers,
      maxPending: this.workers + this.maxQueue,
      start: (events) => startWorkerThread(siblingModule('./solve-worker', import.meta.url), { name: 'solve', resourceLimits }, events),
      message: (task, id) => {
        task.started = performance.now();
        // A problem that starts while others run gets one simulator thread: the pool already uses the cores.
        const options = task.options.threads === undefined && this.#pool.running > 1 ? { ...task.options, threads: 1 } : task.options;
        const request: WorkerRequest = { id, validated: task.validated, options };
        return { message: request };
      },
      settle: (reply, task) => {
        this.#averageMs = 0.8 * this.#averageMs + 0.2 * (performance.now() - task.started!);
        return taskReplyValue(reply);
      },
      errors: {
        full: () => this.#queueFull(),
        closed: shuttingDown,
        // 422, like problem_too_large: the problem exceeds what this service solves per request.
        // (503 is the contract's answer for the hardware substrate, so it is not reused here.)
        timedOut: () =>
          ApiError.unprocessable(
            `The solve ran longer than the local limit of ${Math.round(this.jobTimeoutMs / 1000)} s and was stopped; send a smaller problem or fewer shots.`,
            'problem',
            'solve_time_budget_exceeded',
          ),
        // Past its heap limit V8 stops the worker: the problem is too large for this service.
        died: (cause) =>
          cause instanceof Error && (cause as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? ApiError.unprocessable(`The solve needed more memory than a solve worker may use (${heap}) and was stopped; send a smaller problem.`, 'problem', 'problem_too_large')
            : ApiError.internal(cause),
        unsent: (cause) => ApiError.internal(cause),
      },
    });
  }
}

function settle(run: Promise<ItemResult>): Promise<PromiseSettledResult<ItemResult>> {
  return run.then((value) => ({ status: 'fulfilled', value }), (reason: unknown) => ({ status: 'rejected', reason }));
}

/** The service with defaults sized to this machine. */
export function createSolveService(options: SolveServiceOptions = {}): SolveService {
  return new SolveService(options);
}
