/** Capacities up to this double when full; larger ones grow by a quarter. */
export const GROW_BY_QUARTER_FROM = 65_536;

/**
 * The next capacity of an array that grows as the indexes fill (vector rows, BM25 postings and
 * per-chunk arrays). Doubling while small keeps the copies few; beyond GROW_BY_QUARTER_FROM a
 * quarter: doubling left a 100,000-vector space in arrays for 131,072 (23 MB of the 100 MB of
 * int8 rows unused at 384 dimensions) and held old and new arrays at once while growing (3× the
 * rows). A quarter leaves at most a fifth unused, holds 2.25× while growing, and copies each
 * entry about four times on average instead of once: memcpy, cheap next to filling them.
 */
export function grownCapacity(capacity: number, atLeast = 0): number {
  const next = capacity < GROW_BY_QUARTER_FROM ? capacity * 2 : capacity + Math.ceil(capacity / 4);
  return Math.max(next, atLeast);
}
