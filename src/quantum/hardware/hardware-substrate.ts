import { Worker } from 'node:worker_threads';
import { ApiError } from '../../shared/api-error.ts';
import type { SerializedProblem } from '../solve-intake.ts';
import type { SolveMeta } from '../solve-schemas.ts';
import type { ValidatedProblem } from '../solvers/registry.ts';
import { hardwareErrors } from './hardware-errors.ts';
import type { HardwareJobReport, HardwareWorkerReply, HardwareWorkerRequest, SampleReply, SampleRequest } from './hardware-worker.ts';
import type { RuntimeSamplerClient } from './runtime-sampler-client.ts';

/** The (solver, problem type) pairs whose final circuit goes to hardware; the others estimate from many circuits. */
const HARDWARE_PROBLEMS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['grover', new Set(['pattern_search'])],
  ['qaoa', new Set(['route_optimization'])],
  ['qubo', new Set(['portfolio_allocation'])],
]);

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
}

interface Queued {
  problem: ValidatedProblem | SerializedProblem;
  shots: number;
  seed: number | undefined;
  resolve: (result: HardwareRunResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The `vendor-eagle` substrate behind a provider's job API. Hardware problems go through one
 * FIFO lane, one at a time — the contract's "on the hardware substrate they are queued": a batch's
 * problems are submitted in request order, each after the previous one's job has finished, and
 * the batch is answered when all are done. Each problem runs its solver on a worker of its own
 * (hardware-worker.ts), outside the local solve pool, so a job waiting in the provider's queue
 * holds no local solve worker.
 */
export class ProviderHardware {
  readonly #client: RuntimeSamplerClient | undefined;
  readonly #missing: string;
  readonly #maxQueue: number;
  readonly #queue: Queued[] = [];
  #running: { worker: Worker; job: Queued } | undefined;
  #closed = false;

  constructor(options: ProviderHardwareOptions) {
    this.#client = options.client;
    this.#missing = options.missing ?? 'no hardware provider is configured (svc serve --quantum-provider <url> --quantum-backend <name>, token in SVC_QUANTUM_TOKEN)';
    this.#maxQueue = options.maxQueue ?? 20;
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
    const waiting = this.#queue.length + (this.#running === undefined ? 0 : 1);
    if (this.#closed) throw ApiError.busy('The solve service is shutting down.', 5, 503, 'shutting_down');
    if (waiting + problems.length > this.#maxQueue + 1) {
      throw ApiError.busy(`The hardware queue is full (${waiting} problems ahead, room for ${this.#maxQueue}). Retry later.`, 60, 429, 'hardware_queue_full');
    }
  }

  run(problem: ValidatedProblem | SerializedProblem, shots: number, seed: number | undefined): Promise<HardwareRunResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ problem, shots, seed, resolve, reject });
      this.#next();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing = ApiError.busy('The solve service is shutting down.', 5, 503, 'shutting_down');
    for (const job of this.#queue.splice(0)) job.reject(closing);
    const running = this.#running;
    this.#running = undefined;
    if (running !== undefined) {
      running.job.reject(closing);
      await running.worker.terminate();
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
    const worker = new Worker(new URL('./hardware-worker.ts', import.meta.url));
    this.#running = { worker, job };
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
      if (this.#running?.worker === worker) this.#running = undefined;
      void worker.terminate();
      this.#next();
    };
    worker.on('message', (message: SampleRequest | HardwareWorkerReply) => {
      if (message.kind === 'sample') return void this.#sample(client, message);
      finish(() => {
        if (message.ok) job.resolve({ solution: { ...message.result.solution, hardware: { jobs: message.jobs } }, meta: message.result.meta });
        else if (message.apiError !== null) job.reject(new ApiError(message.apiError));
        else job.reject(ApiError.internal(new Error(message.detail)));
      });
    });
    worker.on('error', (error) => finish(() => job.reject(ApiError.internal(error))));
    worker.on('exit', (code) => finish(() => job.reject(ApiError.internal(new Error(`hardware worker exited with code ${code}`)))));
    const request: HardwareWorkerRequest = { validated: job.problem, shots: job.shots, seed: job.seed };
    worker.postMessage(request);
  }

  async #sample(client: RuntimeSamplerClient, ask: SampleRequest): Promise<void> {
    let reply: SampleReply;
    try {
      const result = await client.sample(ask.qasm, ask.shots);
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

export type { HardwareJobReport };
