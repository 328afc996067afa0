import { Worker } from 'node:worker_threads';
import { ApiError } from '../../shared/api-error.ts';
import { reviveProblem, type SerializedProblem } from '../solve-intake.ts';
import type { SolveMeta } from '../solve-schemas.ts';
import type { ValidatedProblem } from '../solvers/registry.ts';
import { hardwareErrors } from './hardware-errors.ts';
import type { HardwareJobReport, HardwareWorkerReply, HardwareWorkerRequest, SampleReply, SampleRequest } from './hardware-worker.ts';
import type { RuntimeSamplerClient, SampleProgress } from './runtime-sampler-client.ts';
import { siblingModule } from '../../shared/sibling-module.ts';

/** The (solver, problem type) pairs whose final circuit goes to hardware; the others estimate from many circuits. */
const HARDWARE_PROBLEMS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['grover', new Set(['pattern_search'])],
  ['qaoa', new Set(['route_optimization'])],
  ['qubo', new Set(['portfolio_allocation'])],
]);

/**
 * Sizes known before any simulation that the hardware path cannot take (docs/solvers.md,
 * "Hardware"): Grover over more than 7 qubits (128 indices) and QUBO portfolios over more than 10
 * assets need more than the transpiler's 20 000 ECR gates. Refusing them in admit() spares the
 * local simulation and the lowering (a 12-qubit Grover lowers to millions of ops) that would only
 * end in the same 422.
 */
export const HARDWARE_MAX_SEARCH_SPACE = 128;
export const HARDWARE_MAX_ASSETS = 10;

function tooLargeForHardware(validated: ValidatedProblem | SerializedProblem): string | undefined {
  if (validated.type !== 'pattern_search' && validated.type !== 'portfolio_allocation') return undefined;
  const problem = reviveProblem(validated).problem as { search_space_size?: unknown; assets?: unknown };
  if (validated.type === 'pattern_search' && typeof problem.search_space_size === 'number' && problem.search_space_size > HARDWARE_MAX_SEARCH_SPACE) {
    return `a search space of ${problem.search_space_size} indices needs ${Math.ceil(Math.log2(problem.search_space_size))} qubits; the hardware path's Grover circuit fits ${HARDWARE_MAX_SEARCH_SPACE} indices (7 qubits) within its 20000 two-qubit gates`;
  }
  if (validated.type === 'portfolio_allocation' && Array.isArray(problem.assets) && problem.assets.length > HARDWARE_MAX_ASSETS) {
    return `${problem.assets.length} assets are more than the ${HARDWARE_MAX_ASSETS} whose QAOA circuit the hardware path can write within its 20000 two-qubit gates`;
  }
  return undefined;
}

/** V8 heap a hardware worker may use by default: a problem past it is 422 problem_too_large, not a crash. */
const DEFAULT_HARDWARE_HEAP_MB = 2048;

/**
 * How long one hardware solve (or batch item) may take by default, from entering the lane to its
 * answer (`--quantum-deadline`): three provider jobs' worth of the default `--quantum-timeout`
 * (10 min), so a problem behind one or two others still has its own job's full time.
 */
export const DEFAULT_HARDWARE_DEADLINE_MS = 30 * 60_000;

export interface HardwareRunResult {
  solution: Record<string, unknown>;
  meta: SolveMeta;
}

export interface ProviderHardwareOptions {
  /** The configured provider; undefined with `missing` saying what is not configured. */
  client: RuntimeSamplerClient | undefined;
  /** Why the substrate is unavailable (503 message), when `client` is undefined. */
  missing?: string;
  /** Problems that may wait for the hardware lane beyond the one running; default 20. */
  maxQueue?: number;
  /** Old-generation heap limit of a hardware worker (MiB); default 2048. */
  workerHeapMb?: number;
  /**
   * Each problem's deadline (ms) from entering the lane: lane wait, local solve, submit, provider
   * queue, polls and results together; then 504 `substrate_timeout`, its provider job cancelled
   * and the lane freed. Default DEFAULT_HARDWARE_DEADLINE_MS.
   */
  deadlineMs?: number;
}

interface Queued {
  problem: ValidatedProblem | SerializedProblem;
  shots: number;
  seed: number | undefined;
  /** The request's own signal (client gone): skip the item while queued, cancel its job while running. */
  signal: AbortSignal | undefined;
  /** This item's deadline, from entering the lane (ms), and the timer that enforces it. */
  deadlineMs: number;
  timer: NodeJS.Timeout | undefined;
  /** Settle the caller's promise (and stop the timer and the abort listener); later calls do nothing. */
  resolve: (result: HardwareRunResult) => void;
  reject: (error: unknown) => void;
}

interface Running {
  worker: Worker;
  job: Queued;
  /** Aborts the provider call of this job (its client then cancels the provider's job). */
  abort: AbortController;
  /** The provider call in flight, if any: the lane stays busy until it has settled. */
  sampling: Promise<void> | undefined;
  /** Where the provider call in flight is (job id, last status), for the deadline's message. */
  progress: SampleProgress | undefined;
  /** Provider jobs this problem has completed so far. */
  sampled: number;
}

/**
 * The `vendor-eagle` substrate behind a provider's job API. Hardware problems go through one
 * FIFO lane, one at a time — the contract's "on the hardware substrate they are queued": a batch's
 * problems are submitted in request order, each after the previous one's job has finished, and
 * the batch is answered when all are done. Each problem runs its solver on a worker of its own
 * (hardware-worker.ts), outside the local solve pool, so a job waiting in the provider's queue
 * holds no local solve worker. Each problem has one deadline from entering the lane to its
 * answer (lane wait, local solve, provider jobs): past it, 504 wherever it is.
 */
export class ProviderHardware {
  readonly #client: RuntimeSamplerClient | undefined;
  readonly #missing: string;
  readonly #maxQueue: number;
  readonly #heapMb: number;
  readonly #deadlineMs: number;
  readonly #queue: Queued[] = [];
  #running: Running | undefined;
  #closed = false;

  constructor(options: ProviderHardwareOptions) {
    this.#client = options.client;
    this.#missing = options.missing ?? 'no hardware provider is configured (svc serve --quantum-provider <url> --quantum-backend <name>, token in SVC_QUANTUM_TOKEN)';
    this.#maxQueue = options.maxQueue ?? 20;
    this.#heapMb = options.workerHeapMb ?? DEFAULT_HARDWARE_HEAP_MB;
    this.#deadlineMs = options.deadlineMs ?? DEFAULT_HARDWARE_DEADLINE_MS;
  }

  get status(): 'configured' | 'not_configured' {
    return this.#client === undefined ? 'not_configured' : 'configured';
  }

  /** The provider and backend, for health. */
  describe(): { provider: string; backend: string } | undefined {
    return this.#client === undefined ? undefined : { provider: this.#client.origin, backend: this.#client.backend };
  }

  consult(): void {
    if (this.#client === undefined) throw hardwareErrors.unavailable(this.#missing);
  }

  /** Refuses (422) problems that cannot go to hardware and (429) more than the lane holds, before any runs. */
  admit(problems: readonly (ValidatedProblem | SerializedProblem)[]): void {
    this.consult();
    for (const p of problems) if (!HARDWARE_PROBLEMS.get(p.solver)?.has(p.type)) throw hardwareErrors.unsupported(p.solver, p.type);
    for (const p of problems) {
      const why = tooLargeForHardware(p);
      if (why !== undefined) throw hardwareErrors.notTranspilable(why);
    }
    const waiting = this.#queue.length + (this.#running === undefined ? 0 : 1);
    if (this.#closed) throw shuttingDown();
    if (waiting + problems.length > this.#maxQueue + 1) {
      throw ApiError.busy(`The hardware queue is full (${waiting} problems ahead, room for ${this.#maxQueue}). Retry later.`, 60, 429, 'hardware_queue_full');
    }
  }

  /**
   * Runs one admitted problem behind those already in the lane. `deadlineMs` (default: the
   * substrate's) bounds everything from now to the answer; past it the item is answered 504
   * wherever it is — still waiting in the lane, solving locally, or waiting on its provider job,
   * which is then cancelled.
   */
  run(problem: ValidatedProblem | SerializedProblem, shots: number, seed: number | undefined, signal?: AbortSignal, deadlineMs = this.#deadlineMs): Promise<HardwareRunResult> {
    // After close() nothing would ever take the item off the queue: refuse at once, never hang.
    if (this.#closed) return Promise.reject(shuttingDown());
    if (signal?.aborted === true) return Promise.reject(abandoned(signal));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => this.#abandon(job);
      const done = (): void => {
        clearTimeout(job.timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const job: Queued = {
        problem, shots, seed, signal, deadlineMs, timer: undefined,
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
      job.timer = setTimeout(() => this.#expire(job), deadlineMs);
      this.#queue.push(job);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#next();
    });
  }

  /**
   * The item's deadline has passed: a queued item leaves the queue; a running one is answered now,
   * its worker stopped and its provider job cancelled (#next's finish), the lane freed once that
   * cancel has been sent.
   */
  #expire(job: Queued): void {
    const at = this.#queue.indexOf(job);
    if (at >= 0) {
      this.#queue.splice(at, 1);
      const ahead = at + (this.#running === undefined ? 0 : 1);
      return job.reject(hardwareErrors.deadline(job.deadlineMs, `it was still waiting for the hardware lane (one provider job at a time) behind ${ahead} problem${ahead === 1 ? '' : 's'}`));
    }
    const running = this.#running;
    if (running?.job !== job) return;
    running.abort.abort(hardwareErrors.deadline(job.deadlineMs, whereItWas(running)));
  }

  /** The caller went away: a queued item leaves the queue; a running one has its provider job cancelled and its worker stopped. */
  #abandon(job: Queued): void {
    const at = this.#queue.indexOf(job);
    if (at >= 0) {
      this.#queue.splice(at, 1);
      return job.reject(abandoned(job.signal));
    }
    if (this.#running?.job === job) this.#running.abort.abort(abandoned(job.signal));
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing = shuttingDown();
    for (const job of this.#queue.splice(0)) job.reject(closing);
    const running = this.#running;
    if (running !== undefined) {
      // The running job's provider call gives up and cancels the provider's job before we return.
      running.abort.abort(closing);
      running.job.reject(closing);
      await running.worker.terminate();
      await running.sampling;
    }
  }

  #next(): void {
    if (this.#closed || this.#running !== undefined) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    const client = this.#client;
    if (client === undefined) {
      job.reject(hardwareErrors.unavailable(this.#missing));
      return this.#next();
    }
    const worker = new Worker(siblingModule('./hardware-worker', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: this.#heapMb } });
    const running: Running = { worker, job, abort: new AbortController(), sampling: undefined, progress: undefined, sampled: 0 };
    this.#running = running;
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
      void worker.terminate();
      // A worker that died mid-sample leaves its provider call polling: cancel it, and start the
      // next job only once it has settled, so the lane never has two provider jobs at once.
      const sampling = running.sampling;
      if (sampling !== undefined) running.abort.abort(abandoned(undefined));
      void (sampling ?? Promise.resolve()).then(() => {
        if (this.#running === running) this.#running = undefined;
        this.#next();
      });
    };
    running.abort.signal.addEventListener('abort', () => finish(() => job.reject(running.abort.signal.reason)), { once: true });
    worker.on('message', (message: SampleRequest | HardwareWorkerReply) => {
      if (message.kind === 'sample') {
        running.progress = {};
        running.sampling = this.#sample(client, message, running).finally(() => (running.sampling = undefined));
        return;
      }
      finish(() => {
        if (message.ok) job.resolve({ solution: { ...message.result.solution, hardware: { jobs: message.jobs } }, meta: message.result.meta });
        else if (message.apiError !== null) job.reject(new ApiError(message.apiError));
        else job.reject(ApiError.internal(new Error(message.detail)));
      });
    });
    worker.on('error', (error: Error & { code?: string }) =>
      finish(() =>
        job.reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? ApiError.unprocessable(`The hardware solve needed more memory than a hardware worker may use (${this.#heapMb} MiB of heap) and was stopped; send a smaller problem.`, 'problem', 'problem_too_large')
            : ApiError.internal(error),
        ),
      ),
    );
    worker.on('exit', (code) => finish(() => job.reject(ApiError.internal(new Error(`hardware worker exited with code ${code}`)))));
    const request: HardwareWorkerRequest = { validated: job.problem, shots: job.shots, seed: job.seed };
    worker.postMessage(request);
  }

  async #sample(client: RuntimeSamplerClient, ask: SampleRequest, running: Running): Promise<void> {
    let reply: SampleReply;
    try {
      const result = await client.sample({ qasm: ask.qasm, shots: ask.shots, bits: ask.bits, signal: running.abort.signal, progress: running.progress });
      running.sampled++;
      reply = { ok: true, jobId: result.jobId, backend: result.backend, shots: result.shots, counts: [...result.counts] };
    } catch (error) {
      reply = { ok: false, apiError: (error instanceof ApiError ? error : ApiError.internal(error)).toOptions() };
    }
    ask.port.postMessage(reply);
    ask.port.close();
    Atomics.store(ask.signal, 0, 1);
    Atomics.notify(ask.signal, 0);
  }
}

/** What a running item was doing when its deadline passed, for the 504's message. */
function whereItWas(running: Running): string {
  const jobs = running.sampled === 0 ? '' : ` (after ${running.sampled} completed provider job${running.sampled === 1 ? '' : 's'})`;
  if (running.sampling === undefined) return `the local part of the solve (angles optimised on the simulator, the circuit transpiled) had not finished${jobs}`;
  const id = running.progress?.jobId;
  if (id === undefined) return `its circuit was still being submitted to the provider; svc asks the provider to cancel the job should it answer with one${jobs}`;
  if (running.progress?.status?.toLowerCase() === 'completed') return `provider job ${id} had completed but its results were still being fetched${jobs}`;
  return `provider job ${id} had not finished (last status: ${running.progress?.status ?? 'none yet'}); svc asked the provider to cancel it${jobs}`;
}

function shuttingDown(): ApiError {
  return ApiError.busy('The solve service is shutting down.', 5, 503, 'shutting_down');
}

/** Why an abandoned item is rejected: the signal's own ApiError, else a plain 503 (nobody reads it when the client is gone). */
function abandoned(signal: AbortSignal | undefined): ApiError {
  if (signal?.reason instanceof ApiError) return signal.reason;
  return ApiError.busy('The hardware job was abandoned: the request was closed.', 5, 503, 'request_closed');
}

export type { HardwareJobReport };
