import { driveMinutes, hasWindows, LATE_TOLERANCE_MINUTES, type RouteModel } from './route-model.ts';

/**
 * Held-Karp proves the optimum for one vehicle up to this many stops: 2^15·15 states, a few
 * million transitions, tens of milliseconds without time windows (bench/quantum-routes.ts).
 */
export const HELD_KARP_MAX_STOPS = 15;

/**
 * Labels (partial routes kept alive) the time-window variant may hold, about 50 MB; beyond it
 * the search gives up and the route is left to local search with a lower bound.
 */
const MAX_LABELS = 1 << 21;

/** Partial routes that end this far above the upper bound are dropped (rounding slack). */
const BOUND_SLACK_KM = 1e-7;

export type HeldKarpResult =
  /** The shortest route meeting every hard constraint, strictly shorter than the upper bound. */
  | { kind: 'optimal'; order: number[]; distanceKm: number }
  /** No route is shorter than the upper bound: the route that set it is optimal. */
  | { kind: 'none_better' }
  /** No ordering meets the time windows and max_distance_km (only with time windows). */
  | { kind: 'infeasible' }
  /** The time-window search ran out of labels: nothing is proven. */
  | { kind: 'gave_up' };

/**
 * The exact shortest depot → stops → depot route, by Held-Karp dynamic programming over
 * (set of visited stops, last stop). Work is O(n²·2ⁿ) in flat typed arrays, no object per state.
 *
 * Without time windows the table holds one length per state and max_distance_km is checked by
 * the caller on the result (the shortest route is also the one that breaks it least). With
 * time windows a state keeps every Pareto-optimal label (length, arrival time): a shorter
 * partial route may arrive later after waiting for a window, so one label per state would not
 * be exact. A label that arrives after a window closes, or whose length plus the direct leg
 * home exceeds max_distance_km or the upper bound, is pruned (the direct leg is a lower bound
 * on the rest: haversine distances obey the triangle inequality).
 *
 * `upperBoundKm`: the length of a route already found (a feasible one, with time windows);
 * only strictly shorter routes are searched for, which prunes most labels.
 */
export function heldKarpRoute(model: RouteModel, stops: readonly number[], upperBoundKm = Infinity): HeldKarpResult {
  const n = stops.length;
  if (n > HELD_KARP_MAX_STOPS) throw new RangeError(`Held-Karp handles at most ${HELD_KARP_MAX_STOPS} stops, got ${n}`);
  const d = new Float64Array(n * n);
  const home = new Float64Array(n);
  for (let a = 0; a < n; a++) {
    home[a] = model.dist[0]![stops[a]!]!;
    for (let b = 0; b < n; b++) d[a * n + b] = model.dist[stops[a]!]![stops[b]!]!;
  }
  return hasWindows(model) ? withWindows(model, stops, d, home, upperBoundKm) : plain(stops, d, home, upperBoundKm);
}

function plain(stops: readonly number[], d: Float64Array, home: Float64Array, ub: number): HeldKarpResult {
  const n = stops.length;
  const full = (1 << n) - 1;
  const cost = new Float64Array((full + 1) * n).fill(Infinity);
  const parent = new Uint8Array((full + 1) * n);
  for (let k = 0; k < n; k++) cost[(1 << k) * n + k] = home[k]!;
  // supersets are numerically larger, so ascending masks visit every state after its subsets
  for (let mask = 1; mask < full; mask++) {
    for (let j = 0; j < n; j++) {
      if ((mask & (1 << j)) === 0) continue;
      const c = cost[mask * n + j]!;
      if (c === Infinity) continue;
      for (let rest = full & ~mask; rest !== 0; rest &= rest - 1) {
        const k = 31 - Math.clz32(rest & -rest);
        const next = c + d[j * n + k]!;
        if (next + home[k]! - BOUND_SLACK_KM >= ub) continue;
        const at = (mask | (1 << k)) * n + k;
        if (next < cost[at]!) {
          cost[at] = next;
          parent[at] = j;
        }
      }
    }
  }
  let best = Infinity;
  let last = -1;
  for (let j = 0; j < n; j++) {
    const total = cost[full * n + j]! + home[j]!;
    if (total < best) {
      best = total;
      last = j;
    }
  }
  if (last < 0 || !(best < ub)) return { kind: 'none_better' };
  const order: number[] = [];
  for (let mask = full, j = last; mask !== 0; ) {
    order.push(stops[j]!);
    const p = parent[mask * n + j]!;
    mask &= ~(1 << j);
    j = p;
  }
  return { kind: 'optimal', order: order.reverse(), distanceKm: best };
}

function withWindows(model: RouteModel, stops: readonly number[], d: Float64Array, home: Float64Array, ub: number): HeldKarpResult {
  const n = stops.length;
  const full = (1 << n) - 1;
  const maxKm = model.maxDistanceKm + 1e-9;
  const start = new Float64Array(n).fill(-Infinity);
  const end = new Float64Array(n).fill(Infinity);
  stops.forEach((s, k) => {
    const w = model.windows[s];
    if (w !== undefined) {
      start[k] = w.start;
      end[k] = w.end + LATE_TOLERANCE_MINUTES;
    }
  });
  const depotEnd = (model.windows[0]?.end ?? Infinity) + LATE_TOLERANCE_MINUTES;
  // The label pool: parallel typed arrays, a singly linked list per state, grown by doubling.
  let capacity = 1 << 12;
  let km = new Float64Array(capacity);
  let time = new Float64Array(capacity);
  let next = new Int32Array(capacity);
  let parent = new Int32Array(capacity);
  let node = new Uint8Array(capacity);
  let used = 0;
  const head = new Int32Array((full + 1) * n).fill(-1);
  const grow = (): boolean => {
    if (capacity >= MAX_LABELS) return false;
    capacity *= 2;
    const widen = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: (size: number) => T): T => {
      const b = make(capacity);
      b.set(a);
      return b;
    };
    km = widen(km, (s) => new Float64Array(s));
    time = widen(time, (s) => new Float64Array(s));
    next = widen(next, (s) => new Int32Array(s));
    parent = widen(parent, (s) => new Int32Array(s));
    node = widen(node, (s) => new Uint8Array(s));
    return true;
  };
  /** Adds (length, arrival) to a state unless a label there is as short and as early; drops those it beats. */
  const insert = (state: number, length: number, arrival: number, from: number, k: number): boolean => {
    let prev = -1;
    for (let l = head[state]!; l >= 0; l = next[l]!) {
      if (km[l]! <= length && time[l]! <= arrival) return true;
      if (length <= km[l]! && arrival <= time[l]!) {
        if (prev < 0) head[state] = next[l]!;
        else next[prev] = next[l]!;
      } else prev = l;
    }
    if (used === capacity && !grow()) return false;
    km[used] = length;
    time[used] = arrival;
    parent[used] = from;
    node[used] = k;
    next[used] = head[state]!;
    head[state] = used++;
    return true;
  };
  // The same arithmetic, in the same order, as evaluateRoute, so feasibility agrees exactly.
  const arriveAt = (leave: number, leg: number, k: number): number => {
    const t = leave + driveMinutes(model, leg);
    return t < start[k]! ? start[k]! : t;
  };
  for (let k = 0; k < n; k++) {
    const t = arriveAt(model.departure, home[k]!, k);
    if (t > end[k]! || home[k]! + home[k]! > maxKm || home[k]! + home[k]! - BOUND_SLACK_KM >= ub) continue;
    if (!insert((1 << k) * n + k, home[k]!, t, -1, k)) return { kind: 'gave_up' };
  }
  for (let mask = 1; mask < full; mask++) {
    for (let j = 0; j < n; j++) {
      if ((mask & (1 << j)) === 0) continue;
      for (let l = head[mask * n + j]!; l >= 0; l = next[l]!) {
        const leave = time[l]! + model.serviceMinutes;
        const length = km[l]!;
        for (let rest = full & ~mask; rest !== 0; rest &= rest - 1) {
          const k = 31 - Math.clz32(rest & -rest);
          const leg = d[j * n + k]!;
          const total = length + leg;
          if (total + home[k]! > maxKm || total + home[k]! - BOUND_SLACK_KM >= ub) continue;
          const t = arriveAt(leave, leg, k);
          if (t > end[k]!) continue;
          if (!insert((mask | (1 << k)) * n + k, total, t, l, k)) return { kind: 'gave_up' };
        }
      }
    }
  }
  let best = Infinity;
  let bestLabel = -1;
  for (let j = 0; j < n; j++) {
    for (let l = head[full * n + j]!; l >= 0; l = next[l]!) {
      const total = km[l]! + home[j]!;
      const back = time[l]! + model.serviceMinutes + driveMinutes(model, home[j]!);
      if (back > depotEnd || total > maxKm || !(total < best)) continue;
      best = total;
      bestLabel = l;
    }
  }
  if (bestLabel < 0 || !(best < ub)) return ub === Infinity ? { kind: 'infeasible' } : { kind: 'none_better' };
  const order: number[] = [];
  for (let l = bestLabel; l >= 0; l = parent[l]!) order.push(stops[node[l]!]!);
  return { kind: 'optimal', order: order.reverse(), distanceKm: best };
}
