/**
 * The routing model every route method shares (QAOA, Held-Karp, local search): distances, time
 * windows and the schedule rule. One evaluation rule, so that a route every method calls
 * feasible is feasible in the answer too.
 */
export interface RouteModel {
  /** Distances in km between node indices (0 is the depot); symmetric, a metric (haversine). */
  dist: number[][];
  windows: ({ start: number; end: number } | undefined)[];
  speedKmh: number;
  serviceMinutes: number;
  /** Minutes after midnight when vehicles leave the depot. */
  departure: number;
  maxDistanceKm: number;
}

export interface RouteEvaluation {
  distanceKm: number;
  lateMinutes: number;
  /** Arrival (after any wait for a window to open) at each stop, then back at the depot. */
  arrivals: number[];
}

/**
 * Lateness below this many minutes is rounding, not a violation. Every method (and the
 * Held-Karp labels) applies the same rule, with the same arithmetic in the same order.
 */
export const LATE_TOLERANCE_MINUTES = 1e-9;

/** Minutes to drive `km` at the model's speed. */
export const driveMinutes = (model: RouteModel, km: number): number => (km / model.speedKmh) * 60;

/** When node `s` is reached after leaving at `leave` and driving `leg` km: waits for its window to open (never at the depot). */
export function arrivalAt(model: RouteModel, leave: number, leg: number, s: number): number {
  const t = leave + driveMinutes(model, leg);
  const w = model.windows[s];
  return w !== undefined && s !== 0 && t < w.start ? w.start : t;
}

/** Minutes past the end of `s`'s window at `arrival` (0 within it, up to LATE_TOLERANCE_MINUTES). */
export function minutesLate(model: RouteModel, s: number, arrival: number): number {
  const w = model.windows[s];
  return w !== undefined && arrival > w.end + LATE_TOLERANCE_MINUTES ? arrival - w.end : 0;
}

/** Distance and schedule of depot → stops → depot (stops are node indices ≥ 1). */
export function evaluateRoute(model: RouteModel, stops: readonly number[]): RouteEvaluation {
  let distanceKm = 0;
  let lateMinutes = 0;
  let leave = model.departure;
  let at = 0;
  const arrivals: number[] = [];
  for (let k = 0; k <= stops.length; k++) {
    const s = k < stops.length ? stops[k]! : 0;
    const leg = model.dist[at]![s]!;
    distanceKm += leg;
    const t = arrivalAt(model, leave, leg, s);
    lateMinutes += minutesLate(model, s, t);
    arrivals.push(t);
    leave = s !== 0 ? t + model.serviceMinutes : t;
    at = s;
  }
  return { distanceKm, lateMinutes, arrivals };
}

/** True when a route breaks neither a time window nor max_distance_km. */
export const isFeasible = (model: RouteModel, e: RouteEvaluation): boolean => e.lateMinutes === 0 && e.distanceKm <= model.maxDistanceKm + 1e-9;

/**
 * The cost every search minimises: length plus, for a broken constraint, a penalty of at
 * least `scale` (chosen above any route's length), so a feasible route always beats an
 * infeasible one and less violation beats more.
 */
export function penalisedCost(model: RouteModel, e: RouteEvaluation, scale: number): number {
  return penalised(model, e.distanceKm, e.lateMinutes, scale);
}

/** penalisedCost from a route's length and total lateness (also a lower bound for a partial route). */
export function penalised(model: RouteModel, km: number, lateMinutes: number, scale: number): number {
  const over = Math.max(0, km - model.maxDistanceKm - 1e-9);
  return km + scale * (over / Math.max(1e-9, model.maxDistanceKm) + lateMinutes / 60 + (over > 0 || lateMinutes > 0 ? 1 : 0));
}

/** True when any node (depot included) has a time window. */
export const hasWindows = (model: RouteModel): boolean => model.windows.some((w) => w !== undefined);
