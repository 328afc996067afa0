import { roundDown, roundNearest, roundUp } from './safe-rounding.ts';

/**
 * What a route answer says about the optimum, rounded so that every figure stays true once
 * rounded (docs/solvers.md, "Rounding of reported figures"):
 * - lengths (`cost`, `distance_km`, `classical_optimum`) are measured values: nearest, so a
 *   proven-optimal route reports `cost` equal to `classical_optimum`, and, rounding being
 *   monotone, `classical_optimum` ≤ `cost` always;
 * - `lower_bound` rounds down, so it stays ≤ the optimum even when the bound is tight (to the
 *   nearest, a tight bound rounds above the optimum about half the time);
 * - gaps are computed from the unrounded lengths, then round up, so they never understate how
 *   far the route may be from the optimum.
 */

/** Decimals of every km figure and gap a route answer reports. */
export const ROUTE_DECIMALS = 3;
/** A route within this many km of the proven optimum is that optimum (the same legs summed in another order). */
const OPTIMUM_SLACK_KM = 1e-9;
/**
 * A route within this fraction of the 1-tree bound meets it: oneTreeBound lowers its bound by a
 * relative 1e-9 so that the noise of its sums cannot lift it above the optimum, and that margin
 * is not a gap.
 */
const BOUND_SLACK = 1e-7;

/** A length in km as reported (nearest). */
export const reportedKm = (km: number): number => roundNearest(km, ROUTE_DECIMALS);

/** Figures against a proven optimum (Held-Karp, or the trivial route): the relative gap to it is 0 exactly when the route is optimal. */
export function optimumFigures(totalKm: number, optimumKm: number): { classical_optimum: number; optimality_gap: number; proven_optimal: boolean } {
  const proven = totalKm <= optimumKm + OPTIMUM_SLACK_KM;
  return {
    classical_optimum: reportedKm(optimumKm),
    optimality_gap: proven || optimumKm <= 0 ? 0 : roundUp((totalKm - optimumKm) / optimumKm, ROUTE_DECIMALS),
    proven_optimal: proven,
  };
}

/**
 * Figures against a lower bound on the optimum: the bound rounded down, the relative gap to it
 * rounded up (0 when the route meets the bound, which proves a feasible route optimal).
 */
export function lowerBoundFigures(totalKm: number, boundKm: number, feasible: boolean): { lower_bound: number; gap_to_lower_bound: number; proven_optimal: boolean } {
  const meetsBound = totalKm - boundKm <= BOUND_SLACK * boundKm;
  return {
    lower_bound: roundDown(boundKm, ROUTE_DECIMALS),
    gap_to_lower_bound: meetsBound || boundKm <= 0 ? 0 : roundUp((totalKm - boundKm) / boundKm, ROUTE_DECIMALS),
    proven_optimal: feasible && meetsBound,
  };
}
