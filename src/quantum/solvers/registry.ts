import type { z } from 'zod';
import { ApiError } from '../../shared/api-error.ts';
import { parseWithSchema } from '../../shared/parse-with-schema.ts';
import { quoteInput } from '../../shared/quote-input.ts';
import { cryptoRng, seededRng } from '../simulator/rng.ts';
import { PROBLEM_SCHEMAS, SOLVER_NAMES, type Problem, type SolveMeta, type SolverName, type SolverOutput } from '../solve-schemas.ts';
import { solvePatternSearch } from './grover-search.ts';
import { solveQrng } from './grover-qrng.ts';
import { toProblemError } from './problem-too-large.ts';
import { solveRoute } from './qaoa-route.ts';
import { solveClustering } from './qkmeans-clustering.ts';
import { solveClassification } from './qsvm-classification.ts';
import { solvePortfolio } from './qubo-portfolio.ts';
import type { SolverContext } from './solver-context.ts';

/** (solver, problem.type) → implementation. The schemas live in solve-schemas.ts. */
type Implementation = (problem: never, ctx: SolverContext) => SolverOutput;
const IMPLEMENTATIONS: { [S in SolverName]: Record<keyof (typeof PROBLEM_SCHEMAS)[S], Implementation> } = {
  qaoa: { route_optimization: solveRoute },
  grover: { pattern_search: solvePatternSearch, qrng: solveQrng },
  qkmeans: { clustering: solveClustering },
  qsvm: { classification: solveClassification },
  qubo: { portfolio_allocation: solvePortfolio },
};

interface ProblemType {
  schema: z.ZodType;
  implementation: Implementation;
}

/**
 * The same table as Maps: `problem.type` is user input, and a plain-object lookup would find
 * `constructor`, `toString` or `__proto__` on the prototype.
 */
const PROBLEM_TYPES: ReadonlyMap<SolverName, ReadonlyMap<string, ProblemType>> = new Map(
  SOLVER_NAMES.map((solver) => {
    const schemas: Record<string, z.ZodType> = PROBLEM_SCHEMAS[solver];
    const implementations: Record<string, Implementation> = IMPLEMENTATIONS[solver];
    const types = Object.entries(schemas).map(([type, schema]): [string, ProblemType] => [type, { schema, implementation: implementations[type]! }]);
    return [solver, new Map(types)];
  }),
);

function problemTypesOf(solver: SolverName): ReadonlyMap<string, ProblemType> {
  return PROBLEM_TYPES.get(solver)!;
}

export function isSolverName(name: unknown): name is SolverName {
  return typeof name === 'string' && (SOLVER_NAMES as readonly string[]).includes(name);
}

/** 400 for a solver name outside the contract's five. */
export function assertSolverName(name: unknown): SolverName {
  if (isSolverName(name)) return name;
  throw ApiError.invalidRequest(
    `Unknown solver ${quoteInput(name)}: use one of ${SOLVER_NAMES.join(', ')}.`,
    'solver',
    'unknown_solver',
  );
}

export interface ValidatedProblem {
  solver: SolverName;
  type: string;
  problem: Problem;
}

/**
 * Checks a problem against its solver's schemas: not an object → 400 (malformed problem); a
 * `type` the solver does not handle or any field that does not match → 422 naming the field.
 * `param` is the problem's place in the request (`problem`, or `problems.3` in a batch).
 */
export function validateProblem(solver: SolverName, problem: unknown, param = 'problem'): ValidatedProblem {
  if (typeof problem !== 'object' || problem === null || Array.isArray(problem)) {
    throw ApiError.invalidRequest(`Malformed '${param}': it must be a JSON object with a 'type'.`, param, 'invalid_problem');
  }
  const types = problemTypesOf(solver);
  const type = (problem as { type?: unknown }).type;
  const known = typeof type === 'string' ? types.get(type) : undefined;
  if (known === undefined) {
    const allowed = [...types.keys()].map((t) => `'${t}'`).join(' or ');
    throw ApiError.unprocessable(`Invalid '${param}.type': solver '${solver}' solves ${allowed}, got ${quoteInput(type ?? null)}.`, `${param}.type`);
  }
  return { solver, type: type as string, problem: parseWithSchema(known.schema, problem, { status: 422, prefix: param }) as Problem };
}

export interface RunOptions {
  shots: number;
  /** Makes sampling reproducible (qrng excepted: its randomness is always the OS CSPRNG). */
  seed?: number | undefined;
  /** Simulator threads per evaluation (the service passes 1 when problems already run side by side). */
  threads?: number | undefined;
  /** The hardware substrate's sampler (SolverContext.sample); only in the thread that runs the solver. */
  sample?: SolverContext['sample'];
}

/** Runs a validated problem in this thread. Capacity refusals become 422 `problem_too_large`. */
export function runValidated(validated: ValidatedProblem, options: RunOptions): SolverOutput & { meta: SolveMeta } {
  const started = performance.now();
  const ctx: SolverContext = { shots: options.shots, rng: options.seed === undefined ? cryptoRng() : seededRng(options.seed), threads: options.threads, sample: options.sample };
  const implementation = problemTypesOf(validated.solver).get(validated.type)!.implementation;
  let output: SolverOutput;
  try {
    output = implementation(validated.problem as never, ctx);
  } catch (error) {
    throw toProblemError(error);
  }
  return { solution: output.solution, meta: { ...output.meta, elapsed_ms: Math.round(performance.now() - started) } };
}

/** Validate and run in one call: the plain-library entry point (no HTTP, no worker). */
export function solveProblem(solver: unknown, problem: unknown, options: RunOptions): SolverOutput & { meta: SolveMeta } {
  return runValidated(validateProblem(assertSolverName(solver), problem), options);
}
