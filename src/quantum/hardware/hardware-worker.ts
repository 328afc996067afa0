/**
 * The thread a hardware solve runs on (hardware-substrate.ts starts one per problem). The solver
 * runs as on the local substrate — angles are still optimised on the simulator — but its final
 * circuit is transpiled for the target and its shots come from the provider: the solver's
 * `sample` hook posts the QASM to the main thread (which owns the provider client and the token)
 * and blocks on an Atomics wait until the counts arrive on a private port. Solvers stay
 * synchronous, plain library code.
 */
import { MessageChannel, parentPort, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ApiError, type ApiErrorOptions } from '../../shared/api-error.ts';
import type { Circuit } from '../simulator/circuit.ts';
import { reviveProblem, type SerializedProblem } from '../solve-intake.ts';
import { runValidated, type ValidatedProblem } from '../solvers/registry.ts';
import { hardwareErrors } from './hardware-errors.ts';
import { transpileToIsa, TranspileError } from './isa-transpiler.ts';

export interface HardwareWorkerRequest {
  validated: ValidatedProblem | SerializedProblem;
  shots: number;
  seed: number | undefined;
}

/** What the worker asks of the main thread: run this program; answer on `port`, then wake `signal`. */
export interface SampleRequest {
  kind: 'sample';
  qasm: string;
  shots: number;
  /** Width of the register the QASM measures into (`bit[n] c`). */
  bits: number;
  signal: Int32Array;
  port: MessagePort;
}

export type SampleReply =
  | { ok: true; jobId: string; backend: string; shots: number; counts: [number, number][] }
  | { ok: false; apiError: ApiErrorOptions };

/** One provider job, as the response reports it (`solution.hardware.jobs`). */
export interface HardwareJobReport {
  provider_job_id: string;
  backend: string;
  target: string;
  shots: number;
  logical_qubits: number;
  /** Physical qubit of logical qubit i at the start, and where it was measured (c[i]). */
  initial_layout: number[];
  final_layout: number[];
  swaps: number;
  depth: number;
  gates: Record<string, number>;
}

export type HardwareWorkerReply =
  | { kind: 'done'; ok: true; result: ReturnType<typeof runValidated>; jobs: HardwareJobReport[] }
  | { kind: 'done'; ok: false; apiError: ApiErrorOptions | null; detail: string };

parentPort?.once('message', (request: HardwareWorkerRequest) => {
  const jobs: HardwareJobReport[] = [];
  const sample = (circuit: Circuit): Map<number, number> => {
    let isa;
    try {
      isa = transpileToIsa(circuit);
    } catch (error) {
      if (error instanceof TranspileError) throw hardwareErrors.notTranspilable(error.message);
      throw error;
    }
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const ask: SampleRequest = { kind: 'sample', qasm: isa.qasm, shots: request.shots, bits: isa.finalLayout.length, signal, port: port2 };
    parentPort!.postMessage(ask, [port2]);
    // The main thread always answers (its client has a per-job timeout), then notifies; past the
    // solve's deadline the main thread terminates this worker, Atomics.wait included.
    Atomics.wait(signal, 0, 0);
    const reply = receiveMessageOnPort(port1)?.message as SampleReply | undefined;
    port1.close();
    if (reply === undefined) throw new Error('the hardware bridge woke without a reply');
    if (!reply.ok) throw new ApiError(reply.apiError);
    jobs.push({
      provider_job_id: reply.jobId, backend: reply.backend, target: isa.target, shots: reply.shots, logical_qubits: isa.logicalQubits,
      initial_layout: isa.initialLayout, final_layout: isa.finalLayout, swaps: isa.swaps, depth: isa.depth, gates: isa.gates,
    });
    return new Map(reply.counts);
  };
  let reply: HardwareWorkerReply;
  try {
    const result = runValidated(reviveProblem(request.validated), { shots: request.shots, seed: request.seed, threads: 1, sample });
    reply = { kind: 'done', ok: true, result, jobs };
  } catch (error) {
    reply = { kind: 'done', ok: false, apiError: error instanceof ApiError ? error.toOptions() : null, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(reply);
});
