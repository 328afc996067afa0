/**
 * A solve worker thread: receives validated problems from SolveService, runs them with the
 * solver registry and posts back the result or the error (ApiErrors by value, anything else as
 * an opaque failure whose message is for the log only).
 */
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../shared/lower-thread-priority.ts';
import { ApiError, type ApiErrorOptions } from '../shared/api-error.ts';
import { reviveProblem, type SerializedProblem } from './solve-intake.ts';
import { runValidated, type RunOptions, type ValidatedProblem } from './solvers/registry.ts';

export interface WorkerRequest {
  id: number;
  /** Validated by intake; a large one arrives as JSON text (parsed here, off the event loop). */
  validated: ValidatedProblem | SerializedProblem;
  options: RunOptions;
}

export type WorkerReply =
  | { id: number; ok: true; result: ReturnType<typeof runValidated> }
  | { id: number; ok: false; apiError: ApiErrorOptions | null; detail: string };

// Below the event loop: a simulation must not keep the daemon from answering (lower-thread-priority.ts).
lowerThreadPriority();

parentPort?.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { id: request.id, ok: true, result: runValidated(reviveProblem(request.validated), request.options) };
  } catch (error) {
    reply = { id: request.id, ok: false, apiError: error instanceof ApiError ? error.toOptions() : null, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(reply);
});
