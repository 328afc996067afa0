/**
 * `solution.measurement_counts`: the most frequent outcomes of the circuit's final measurement,
 * asked for with `problem.options.include_counts` (docs/solvers.md, "Measurement counts"). A
 * 20-qubit QAOA run can measure a different bitstring on nearly every shot, so the answer holds
 * at most `counts_top_k` outcomes and says how many shots fell outside them: the histogram is
 * bounded whatever the shots, and what is left out is counted, not hidden.
 */

/** Outcomes listed when the request does not say (`problem.options.counts_top_k`). */
export const COUNTS_TOP_K_DEFAULT = 32;
/** The most outcomes one answer lists. */
export const COUNTS_TOP_K_MAX = 256;

export interface MeasuredOutcome {
  /** Qubit n−1 first, qubit 0 last: Qiskit's `get_counts()` order, and `index` in binary. */
  bitstring: string;
  /** The basis index measured (the bitstring read as a binary number). */
  index: number;
  count: number;
  /** One of the solver's optimal outcomes (Grover: a matching record; QAOA: an enumerated optimum). */
  optimal: boolean;
}

export interface MeasurementCounts {
  qubits: number;
  /** Shots of this circuit: the sum of every count, listed or not. */
  shots: number;
  /** Distinct outcomes measured (listed or not). */
  distinct_outcomes: number;
  /** Shots whose outcome is not listed (beyond the top k). */
  other_count: number;
  /** Shots that measured an optimal outcome, listed or not. */
  optimal_count: number;
  /** By count, most first; ties by index, lowest first. */
  outcomes: (MeasuredOutcome & Record<string, unknown>)[];
}

/** What a problem's `options` say about counts; undefined when they were not asked for. */
export function countsLimit(options: { include_counts?: boolean | undefined; counts_top_k?: number | undefined } | undefined): number | undefined {
  return options?.include_counts === true ? (options.counts_top_k ?? COUNTS_TOP_K_DEFAULT) : undefined;
}

/**
 * The top `limit` outcomes of `counts` (basis index → shots). `optimal` marks the solver's optimal
 * indices; `describe` adds the solver's reading of a listed outcome (the record, the route, the
 * selected assets), called only for the listed ones.
 */
export function measurementCounts(
  counts: ReadonlyMap<number, number>,
  qubits: number,
  limit: number,
  optimal: ReadonlySet<number>,
  describe?: (index: number) => Record<string, unknown>,
): MeasurementCounts {
  const all = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const shown = all.slice(0, limit);
  let shots = 0;
  let optimalCount = 0;
  for (const [z, c] of all) {
    shots += c;
    if (optimal.has(z)) optimalCount += c;
  }
  const listed = shown.reduce((sum, [, c]) => sum + c, 0);
  return {
    qubits,
    shots,
    distinct_outcomes: all.length,
    other_count: shots - listed,
    optimal_count: optimalCount,
    outcomes: shown.map(([index, count]) => ({
      bitstring: index.toString(2).padStart(qubits, '0'),
      index,
      count,
      optimal: optimal.has(index),
      ...describe?.(index),
    })),
  };
}

/** What an answer says about counts: nothing when not asked; the counts; or null and why there are none. */
export type CountsFields = Record<string, never> | { measurement_counts: MeasurementCounts } | { measurement_counts: null; measurement_counts_unavailable: string };

/**
 * The `measurement_counts` fields of an answer, on every solver path alike: none when the
 * request did not ask; when it did, what `produce` gives for the limit, the counts or the
 * reason there are none (`measurement_counts: null` and `measurement_counts_unavailable`),
 * so an answer never leaves the field out silently after it was asked for.
 */
export function countsFields(options: Parameters<typeof countsLimit>[0], produce: (limit: number) => MeasurementCounts | string): CountsFields {
  const limit = countsLimit(options);
  if (limit === undefined) return {};
  const counts = produce(limit);
  return typeof counts === 'string' ? { measurement_counts: null, measurement_counts_unavailable: counts } : { measurement_counts: counts };
}
