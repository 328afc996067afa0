import { ApiError } from '../shared/api-error.ts';
import { isRejected, type RejectedProblem } from './batch-results.ts';
import { parseJsonBody } from '../shared/json-body.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import {
  BATCH_MAX_PROBLEMS,
  PROBLEM_MAX_BYTES,
  batchRequestSchema,
  solveRequestSchema,
  type SolverName,
  type Substrate,
} from './solve-schemas.ts';
import { assertSolverName, validateProblem, type ValidatedProblem } from './solvers/registry.ts';

/**
 * Intake of solve and batch requests: everything checked before a problem may run — the
 * envelope, the solver name, the batch's size, each problem's size and schema. Plain functions
 * with no HTTP: the service runs them on the event loop for small bodies and on the intake
 * worker (shared/off-thread.ts) for large ones, where a 10 MB batch is parsed and validated
 * without holding up other requests.
 */
export type SolveKind = 'solve' | 'batch';

/** A request body left unparsed on the event loop (solve-routes.ts): intake parses it on the worker. */
export class RawJsonBody {
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
}

/** A request that passed intake; each problem is ready for a solve worker. */
export interface PreparedSolve<P = ValidatedProblem> {
  /** Answered as a batch response (`/solve/batch`, or `/solve` with `batch: true`). */
  batch: boolean;
  /** Where the problems were in the request, for error params: `problem` or `problems`. */
  field: 'problem' | 'problems';
  solver: SolverName;
  substrate: Substrate;
  shots: number;
  seed: number | undefined;
  /** In a batch, a problem its solver's schema refuses (422) stays in its place as a RejectedProblem. */
  problems: (P | RejectedProblem)[];
}

/** A validated problem as JSON text: strings cross between threads as one copy, where an object graph is cloned node by node. */
export interface SerializedProblem {
  solver: SolverName;
  type: string;
  json: string;
}

function checkSize(json: string, param: string): void {
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > PROBLEM_MAX_BYTES) {
    throw ApiError.tooLarge(`'${param}' is ${bytes} bytes of JSON; a problem may be at most ${PROBLEM_MAX_BYTES} bytes (1 MB).`, param, 'problem_too_large');
  }
}

function envelope(body: unknown, kind: SolveKind) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.invalidRequest('The request body must be a JSON object.', null, 'invalid_request');
  }
  // An unknown solver is a 400 whatever else is wrong.
  const solver = assertSolverName((body as { solver?: unknown }).solver);
  if (kind === 'batch') {
    const request = parseWithSchema(batchRequestSchema, body, { status: 400 });
    return { ...request, solver, batch: true, field: 'problems' as const, problems: request.problems };
  }
  const request = parseWithSchema(solveRequestSchema, body, { status: 400 });
  if (request.batch) {
    if (!Array.isArray(request.problem)) throw ApiError.invalidRequest("With 'batch: true', 'problem' must be an array of problems.", 'problem', 'invalid_problem');
    return { ...request, solver, field: 'problem' as const, problems: request.problem as unknown[] };
  }
  if (Array.isArray(request.problem)) {
    throw ApiError.invalidRequest("Malformed 'problem': an array needs 'batch: true' (or POST /api/solve/batch).", 'problem', 'invalid_problem');
  }
  return { ...request, solver, field: 'problem' as const, problems: [request.problem] };
}

/** A problem as a solve worker receives it, back to an object (large ones cross threads as JSON text). */
export function reviveProblem(validated: ValidatedProblem | SerializedProblem): ValidatedProblem {
  if (!('json' in validated)) return validated;
  return { solver: validated.solver, type: validated.type, problem: JSON.parse(validated.json) as ValidatedProblem['problem'] };
}

/** Intake of a parsed body (on the event loop for small bodies; prepareSolveJson on the worker). */
export function prepareSolve(body: unknown, kind: SolveKind): PreparedSolve {
  const request = envelope(body, kind);
  const { solver, problems, field } = request;
  if (request.batch) {
    if (problems.length > BATCH_MAX_PROBLEMS) {
      throw ApiError.tooLarge(`A batch holds at most ${BATCH_MAX_PROBLEMS} problems; this one has ${problems.length}.`, field, 'batch_too_large');
    }
    if (problems.length === 0) throw ApiError.invalidRequest(`'${field}' must hold at least one problem.`, field, 'invalid_problem');
  }
  const param = (i: number) => (request.batch ? `${field}.${i}` : field);
  // Sizes first, all of them: a 413 for the whole request before any schema work.
  problems.forEach((p, i) => checkSize(JSON.stringify(p) ?? '', param(i)));
  return {
    batch: request.batch,
    field,
    solver,
    substrate: request.substrate,
    shots: request.shots,
    seed: request.seed,
    problems: problems.map((p, i) => (request.batch ? validateBatchItem(solver, p, param(i)) : validateProblem(solver, p, param(i)))),
  };
}

/**
 * A batch item that does not match its solver's schema (422) fails on its own: the others
 * still run. A problem that is not even an object leaves the request malformed (400).
 */
function validateBatchItem(solver: SolverName, problem: unknown, param: string): ValidatedProblem | RejectedProblem {
  try {
    return validateProblem(solver, problem, param);
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) return { rejected: error.toOptions() };
    throw error;
  }
}

/** Intake of a raw body on the intake worker: parse, validate, and hand back each problem as JSON text. */
export function prepareSolveJson(bytes: Uint8Array, kind: SolveKind): PreparedSolve<SerializedProblem> {
  const prepared = prepareSolve(parseJsonBody(bytes), kind);
  // The validated problem (defaults applied) is what runs, so that is what is serialized.
  return { ...prepared, problems: prepared.problems.map((p) => (isRejected(p) ? p : { solver: p.solver, type: p.type, json: JSON.stringify(p.problem) })) };
}
