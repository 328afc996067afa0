/**
 * A query as the int8 scans take it: scaled to ±127 (quantizeQuery), and its nonzero components
 * listed (sparseQuery), which are the columns the column scan reads.
 */

/** A query's nonzero int8 components: their dimensions, weights, and the weights' sum. */
export interface SparseQuery {
  dims: Int32Array;
  weights: Int8Array;
  weightSum: number;
}

export function sparseQuery(q: Int8Array): SparseQuery {
  let count = 0;
  for (let j = 0; j < q.length; j++) if (q[j] !== 0) count++;
  const dims = new Int32Array(count);
  const weights = new Int8Array(count);
  let weightSum = 0;
  for (let j = 0, at = 0; j < q.length; j++) {
    if (q[j] === 0) continue;
    dims[at] = j;
    weights[at++] = q[j]!;
    weightSum += q[j]!;
  }
  return { dims, weights, weightSum };
}

/** The query scaled to ±127 into `out`; returns the int8 query's length (0 for a zero or non-finite vector). */
export function quantizeQuery(query: Float32Array, out: Int8Array): number {
  const d = query.length;
  let max = 0;
  for (let j = 0; j < d; j++) {
    const a = Math.abs(query[j]!);
    if (a > max) max = a;
  }
  if (!(max > 0 && max < Infinity)) return 0;
  const scale = 127 / max;
  let norm = 0;
  for (let j = 0; j < d; j++) {
    const v = Math.round(query[j]! * scale);
    out[j] = v;
    norm += v * v;
  }
  return Math.sqrt(norm);
}
