/**
 * The retrieval metrics of the evaluation, as pure functions over ranks so they can be checked
 * against hand-made rankings. Each labelled query has one supporting passage (a chunk holding its
 * answer span; with chunk overlap there can be two, and the first one found counts), so recall@k
 * is the share of queries whose first relevant result is at rank ≤ k, and MRR@k averages 1/rank
 * (0 when nothing relevant is in the top k).
 */

/** The 1-based rank of the first relevant result, or null when none is. */
export function firstRelevantRank<T>(results: readonly T[], isRelevant: (result: T) => boolean): number | null {
  const index = results.findIndex(isRelevant);
  return index === -1 ? null : index + 1;
}

/** Share of queries whose first relevant rank is ≤ k; 0 for no queries. */
export function recallAtK(ranks: readonly (number | null)[], k: number): number {
  if (ranks.length === 0) return 0;
  return ranks.filter((rank) => rank !== null && rank <= k).length / ranks.length;
}

/** Mean of 1/rank over all queries, counting ranks beyond `cutoff` (and misses) as 0. */
export function meanReciprocalRank(ranks: readonly (number | null)[], cutoff = Number.POSITIVE_INFINITY): number {
  if (ranks.length === 0) return 0;
  let sum = 0;
  for (const rank of ranks) if (rank !== null && rank <= cutoff) sum += 1 / rank;
  return sum / ranks.length;
}

/**
 * nDCG@k with one relevant passage per query (binary gain): the ideal ranking puts it first, so
 * a query scores 1/log2(rank + 1) when found at rank ≤ k and 0 otherwise; the mean over queries.
 */
export function ndcgAtK(ranks: readonly (number | null)[], k: number): number {
  if (ranks.length === 0) return 0;
  let sum = 0;
  for (const rank of ranks) if (rank !== null && rank <= k) sum += 1 / Math.log2(rank + 1);
  return sum / ranks.length;
}

/**
 * For two systems' ranks of the same queries: how many queries only `a` finds within k, and how
 * many only `b` does. Fusion helps when each single list finds queries the other misses and the
 * fused list keeps both; this says which side of that trade a run is on.
 */
export function foundOnlyBy(a: readonly (number | null)[], b: readonly (number | null)[], k: number): { aOnly: number; bOnly: number } {
  if (a.length !== b.length) throw new Error('rank lists of different queries');
  let aOnly = 0;
  let bOnly = 0;
  for (let i = 0; i < a.length; i++) {
    const inA = a[i] != null && a[i]! <= k;
    const inB = b[i] != null && b[i]! <= k;
    if (inA && !inB) aOnly++;
    if (inB && !inA) bOnly++;
  }
  return { aOnly, bOnly };
}

/**
 * The nearest-rank percentile (the smallest sample with at least p% of samples at or below it),
 * so p99 of 100 samples is the 99th smallest, and a percentile is always a measured value.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = samples.slice().sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export interface LatencySummary {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  samples: number;
}

export function summarizeLatencies(samplesMs: readonly number[]): LatencySummary {
  const mean = samplesMs.length === 0 ? Number.NaN : samplesMs.reduce((sum, x) => sum + x, 0) / samplesMs.length;
  return {
    p50Ms: percentile(samplesMs, 50),
    p99Ms: percentile(samplesMs, 99),
    meanMs: mean,
    maxMs: samplesMs.length === 0 ? Number.NaN : Math.max(...samplesMs),
    samples: samplesMs.length,
  };
}
