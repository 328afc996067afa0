/**
 * A solve worker thread: receives validated problems from SolveService, runs them with the
 * solver registry and posts back the result or the error (ApiErrors by value, anything else as
 * an opaque failure whose message is for the log only).
 */
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../shared/lower-thread-priority.ts';
import { reduceMemoryWhenIdle } from '../shared/memory-reducing-gc.ts';
import { failedTaskReply, type TaskReply } from '../shared/task-reply.ts';
import { reviveProblem, type SerializedProblem } from './solve-intake.ts';
import { runValidated, type RunOptions, type ValidatedProblem } from './solvers/registry.ts';
import { SIMULATOR_IDLE_RELEASE_MS } from './simulator/idle-release.ts';

export interface WorkerRequest {
  id: number;
  /** Validated by intake; a large one arrives as JSON text (parsed here, off the event loop). */
  validated: ValidatedProblem | SerializedProblem;
  options: RunOptions;
}

/** The solution and its meta, or why it failed (ApiErrors by value). */
export type WorkerReply = TaskReply<ReturnType<typeof runValidated>>;

// Below the event loop: a simulation must not keep the daemon from answering (lower-thread-priority.ts).
lowerThreadPriority();

/**
 * Memory back once idle, on this thread: a finished solve's state vectors (256 MB at 24 qubits)
 * are garbage that an idle worker's V8 never collects (a daemon stayed at 1.8 GB after ten
 * 24-qubit solves). Once 2 s after the last job, and again just after the simulator lets go of
 * its per-thread buffers (20 s, simulator/idle-release.ts).
 */
const releaseSoon = reduceMemoryWhenIdle(2_000);
const releaseLater = reduceMemoryWhenIdle(SIMULATOR_IDLE_RELEASE_MS + 1_000);

parentPort?.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { id: request.id, ok: true, value: runValidated(reviveProblem(request.validated), request.options) };
  } catch (error) {
    reply = failedTaskReply(request.id, error);
  }
  parentPort?.postMessage(reply);
  releaseSoon.touch();
  releaseLater.touch();
});
