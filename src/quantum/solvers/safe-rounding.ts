/**
 * Rounding of reported figures to a fixed number of decimals, in a stated direction.
 *
 * A bound must stay a bound once rounded (a lower bound rounds down, a gap or upper bound
 * rounds up), and the naive `Math.floor(x * 1000) / 1000` does not guarantee it: `x * 1000` is
 * itself rounded, so for x = 0.11699999999999999 (the double just below 0.117) it gives 0.117,
 * above x, and for x = 1.001 it gives 1 (a whole step lower than needed). These helpers step the
 * naive answer until it is the tightest multiple of 10^-decimals on the required side of x,
 * compared as doubles — which is how a client compares the figure it parses from JSON (the
 * multiple k/10^d is written as the double nearest it, whose shortest form is that decimal).
 *
 * They round the double they are given exactly; they do not guess that 1.9999999999 "means" 2.
 * Floating noise in how a figure was computed is for the caller to handle where it knows its
 * size (the route solver reports a gap of 0 when the route is proven optimal, and its 1-tree
 * bound is already lowered by a relative 1e-9 to absorb the noise of its sums).
 */

/** Above 2^52 every double is an integer: with x·10^d that large, x has no finer digits to drop. */
const COARSER_THAN_GRID = 2 ** 52;

function scaleOf(decimals: number): number {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 15) throw new RangeError(`decimals must be an integer from 0 to 15, got ${decimals}`);
  return 10 ** decimals;
}

/** The largest multiple of 10^-decimals that is ≤ x (for lower bounds). */
export function roundDown(x: number, decimals: number): number {
  const s = scaleOf(decimals);
  if (!Number.isFinite(x) || Math.abs(x * s) >= COARSER_THAN_GRID) return x;
  let k = Math.floor(x * s);
  while (k / s > x) k--;
  while ((k + 1) / s <= x) k++;
  return k / s + 0; // + 0 turns -0 into 0
}

/** The smallest multiple of 10^-decimals that is ≥ x (for gaps and upper bounds). */
export function roundUp(x: number, decimals: number): number {
  const s = scaleOf(decimals);
  if (!Number.isFinite(x) || Math.abs(x * s) >= COARSER_THAN_GRID) return x;
  let k = Math.ceil(x * s);
  while (k / s < x) k++;
  while ((k - 1) / s >= x) k--;
  return k / s + 0;
}

/**
 * The multiple of 10^-decimals nearest x, halves upwards (for measured values such as a route's
 * length, where the closest figure is the most truthful and neither direction is safer).
 */
export function roundNearest(x: number, decimals: number): number {
  const down = roundDown(x, decimals);
  const up = roundUp(x, decimals);
  return x - down < up - x ? down : up;
}
