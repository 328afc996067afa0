import { z } from 'zod';
import { COUNTS_TOP_K_MAX } from './solvers/measurement-counts.ts';

/**
 * The one schema source for the solve endpoints (contract: "Solve request", "Batch request",
 * "Problem and solution shapes per solver"). Types are inferred from these schemas; the
 * routes, the CLI and the worker all validate with them.
 */

export const SOLVER_NAMES = ['qaoa', 'grover', 'qkmeans', 'qsvm', 'qubo'] as const;
export type SolverName = (typeof SOLVER_NAMES)[number];

export const SUBSTRATES = ['local', 'vendor-eagle'] as const;
export type Substrate = (typeof SUBSTRATES)[number];

export const SHOTS_DEFAULT = 1024;
export const SHOTS_MAX = 65536;
/** The contract gives no batch maximum; svc applies the single-solve maximum per problem. */
export const BATCH_SHOTS_MAX = 65536;
export const BATCH_MAX_PROBLEMS = 10;
/** Each problem, serialised as JSON, may be at most 1 MB (contract "Limits"). */
export const PROBLEM_MAX_BYTES = 1_000_000;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
/**
 * Feature values and portfolio figures: finite and at most 1e12 in magnitude, so squares and
 * sums of squares stay finite (no overflow to Infinity, no Inf − Inf = NaN).
 */
export const MAX_MAGNITUDE = 1e12;
const bounded = finite.min(-MAX_MAGNITUDE).max(MAX_MAGNITUDE);
const id = z.string().min(1).max(200);
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time HH:MM (24-hour)');

/**
 * Options svc accepts on every problem (extensions, all optional). Strict: a mistyped option
 * (`include_count`) would otherwise be dropped and the answer quietly lack what was asked for.
 */
export const problemOptionsSchema = z
  .strictObject({
    /** Attach the OpenQASM 3 text of the circuit that ran to `solution.circuit.qasm`. */
    include_qasm: z.boolean().optional(),
    /** Attach `solution.measurement_counts`: the top outcomes of the final measurement (Grover and QAOA solvers). */
    include_counts: z.boolean().optional(),
    /** How many outcomes `measurement_counts` lists at most (default 32). */
    counts_top_k: z.number().int().min(1).max(COUNTS_TOP_K_MAX).optional(),
  })
  .refine((options) => options.counts_top_k === undefined || options.include_counts === true, {
    message: 'counts_top_k applies only with include_counts: true',
    path: ['counts_top_k'],
  })
  .optional();

export const routeProblemSchema = z.object({
  type: z.literal('route_optimization'),
  nodes: z
    .array(z.object({ id, lat: finite.min(-90).max(90), lng: finite.min(-180).max(180) }))
    .min(2)
    .max(500)
    .refine((nodes) => new Set(nodes.map((n) => n.id)).size === nodes.length, 'node ids must be unique'),
  constraints: z.object({
    max_distance_km: finite.positive(),
    vehicle_count: z.number().int().min(1).max(50),
    time_windows: z.array(z.object({ node: id, start: hhmm, end: hhmm })).max(500).optional(),
  }),
  /** Average travel speed for time windows (extension). */
  speed_kmh: finite.positive().max(2000).optional(),
  /** Minutes spent at each stop before leaving (extension). */
  service_minutes: finite.min(0).max(1440).optional(),
  /** When the vehicles leave the depot (extension). */
  departure_time: hhmm.optional(),
  options: problemOptionsSchema,
});
export type RouteProblem = z.infer<typeof routeProblemSchema>;

export const patternSearchProblemSchema = z.object({
  type: z.literal('pattern_search'),
  dataset: z.string(),
  target: z.object({
    pattern: z.string().min(1).max(10_000),
    min_confidence: finite.min(0).max(1),
  }),
  search_space_size: z.number().int().min(1),
  options: problemOptionsSchema,
});
export type PatternSearchProblem = z.infer<typeof patternSearchProblemSchema>;

export const QRNG_FORMATS = ['base64', 'hex', 'binary'] as const;
export const QRNG_MAX_BITS = 1_048_576;
export const qrngProblemSchema = z.object({
  type: z.literal('qrng'),
  bits: z.number().int().min(1).max(QRNG_MAX_BITS),
  format: z.enum(QRNG_FORMATS).default('base64'),
  options: problemOptionsSchema,
});
export type QrngProblem = z.infer<typeof qrngProblemSchema>;

/** Most features per point (clustering, classification). */
export const MAX_FEATURES = 64;
const features = z.array(bounded).min(1).max(MAX_FEATURES);

/** Flags every row whose `features` length differs from `dim`. */
function checkDimensions(ctx: z.RefinementCtx, rows: readonly { features: number[] }[], field: string, dim: number, like: string): void {
  rows.forEach((row, i) => {
    if (row.features.length !== dim) ctx.addIssue({ code: 'custom', path: [field, i, 'features'], message: `must have ${dim} features like ${like}` });
  });
}

/** Most clusters a clustering problem may ask for (and never more than its points). */
export const CLUSTERING_MAX_K = 256;

export const clusteringProblemSchema = z
  .object({
    type: z.literal('clustering'),
    data: z
      .array(z.object({ id, features }))
      .min(1)
      .max(5000)
      .refine((d) => new Set(d.map((x) => x.id)).size === d.length, 'point ids must be unique'),
    k: z.number().int().min(1).max(CLUSTERING_MAX_K),
    max_iterations: z.number().int().min(1).max(1000),
    options: problemOptionsSchema,
  })
  .superRefine((p, ctx) => {
    checkDimensions(ctx, p.data, 'data', p.data[0]?.features.length ?? 0, 'data.0');
    if (p.k > p.data.length) ctx.addIssue({ code: 'custom', path: ['k'], message: `must be at most the number of points (${p.data.length})` });
  });
export type ClusteringProblem = z.infer<typeof clusteringProblemSchema>;

export const classificationProblemSchema = z
  .object({
    type: z.literal('classification'),
    training_data: z.array(z.object({ features, label: z.string().min(1).max(200) })).min(2).max(1000),
    predict: z.array(z.object({ features })).min(1).max(5000),
    options: problemOptionsSchema,
  })
  .superRefine((p, ctx) => {
    const dim = p.training_data[0]?.features.length ?? 0;
    checkDimensions(ctx, p.training_data, 'training_data', dim, 'training_data.0');
    checkDimensions(ctx, p.predict, 'predict', dim, 'the training data');
    if (new Set(p.training_data.map((d) => d.label)).size < 2) {
      ctx.addIssue({ code: 'custom', path: ['training_data'], message: 'needs at least two distinct labels' });
    }
  });
export type ClassificationProblem = z.infer<typeof classificationProblemSchema>;

export const portfolioProblemSchema = z.object({
  type: z.literal('portfolio_allocation'),
  assets: z
    .array(z.object({ id, expected_return: bounded, risk: bounded.min(0) }))
    .min(1)
    .max(2000)
    .refine((a) => new Set(a.map((x) => x.id)).size === a.length, 'asset ids must be unique'),
  constraints: z.object({
    max_assets: z.number().int().min(1),
    max_risk: bounded.min(0),
    min_return: bounded,
  }),
  /** Pairwise correlation of the assets in the risk model (extension, default 0.3). */
  correlation: finite.min(-1).max(1).optional(),
  /** Weight of risk against return in the objective (extension, default 0.5). */
  risk_aversion: finite.min(0).max(1000).optional(),
  options: problemOptionsSchema,
});
export type PortfolioProblem = z.infer<typeof portfolioProblemSchema>;

/** Which problem types each solver accepts, with their schemas. */
export const PROBLEM_SCHEMAS = {
  qaoa: { route_optimization: routeProblemSchema },
  grover: { pattern_search: patternSearchProblemSchema, qrng: qrngProblemSchema },
  qkmeans: { clustering: clusteringProblemSchema },
  qsvm: { classification: classificationProblemSchema },
  qubo: { portfolio_allocation: portfolioProblemSchema },
} as const satisfies Record<SolverName, Record<string, z.ZodType>>;

export type Problem = RouteProblem | PatternSearchProblem | QrngProblem | ClusteringProblem | ClassificationProblem | PortfolioProblem;

const shots = (max: number) => z.number().int().min(1).max(max).default(SHOTS_DEFAULT);
const seed = z.number().int().min(0).max(2 ** 32 - 1).optional();

/**
 * The envelope of `POST /api/solve` (problem checked separately, per solver). `batch: true`
 * with an array `problem` is accepted and answered as a batch.
 */
export const solveRequestSchema = z.object({
  solver: z.string(),
  problem: z.unknown(),
  substrate: z.enum(SUBSTRATES).default('local'),
  shots: shots(SHOTS_MAX),
  batch: z.boolean().default(false),
  seed,
});
export type SolveRequest = z.infer<typeof solveRequestSchema>;

export const batchRequestSchema = z.object({
  solver: z.string(),
  problems: z.array(z.unknown()),
  substrate: z.enum(SUBSTRATES).default('local'),
  shots: shots(BATCH_SHOTS_MAX),
  seed,
});
export type BatchRequest = z.infer<typeof batchRequestSchema>;

/** What every solver reports (contract "Solve response" → meta). */
export interface SolveMeta {
  shots: number;
  optimal_count: number;
  energy: number;
  depth: number;
  elapsed_ms: number;
}

export interface SolverOutput {
  solution: Record<string, unknown>;
  meta: Omit<SolveMeta, 'elapsed_ms'>;
}

export interface SolveResponse {
  id: string;
  solver: string;
  substrate: Substrate;
  status: 'completed';
  solution: Record<string, unknown>;
  meta: SolveMeta;
  seed?: number;
}

/** A failed batch item's error: the fields of the error envelope a single solve would have answered with. */
export interface BatchItemError {
  message: string;
  type: string;
  code: string;
  param?: string | null;
  docs_url?: string;
}

/**
 * One problem of a batch: solved, or failed on its own while the others ran (answered 200 all
 * the same). A failed item keeps the contract's item keys, `solution` and `meta` null, beside its
 * `error` (as an OpenAI batch result line has `response: null` beside its `error`).
 */
export type BatchItem =
  | { index: number; status: 'completed'; solution: Record<string, unknown>; meta: SolveMeta }
  | { index: number; status: 'failed'; solution: null; meta: null; error: BatchItemError };

export interface BatchResponse {
  id: string;
  solver: string;
  substrate: Substrate;
  /** The batch was processed: every item has its own `status`, `completed` or `failed`. */
  status: 'completed';
  results: BatchItem[];
  /** How many items there are and how they ended (OpenAI's batch `request_counts`). */
  request_counts: { total: number; completed: number; failed: number };
  total_elapsed_ms: number;
  seed?: number;
}
