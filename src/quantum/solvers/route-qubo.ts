import { driveMinutes, evaluateRoute, type RouteModel } from './route-model.ts';

/** Lateness the QUBO sees below this many minutes is rounding (the bound it uses is not exact arithmetic). */
const QUBO_LATE_TOLERANCE_MINUTES = 1e-6;

/**
 * The QUBO QAOA minimises for `stops` in the one-hot encoding: qubit i·m+p says "stop i is
 * visited at position p". Terms:
 * - length: the legs from `from` (the node before the window, the depot for a whole route)
 *   to position 0, between consecutive positions, and from position m−1 to `to`;
 * - time windows: each term that places a stop (or `to`) after its window closes, by a lower
 *   bound on the arrival, costs B·(1 + ℓ/(ℓ+60)) for ℓ minutes late, with B above any
 *   ordering's length: linear for position 0 (the arrival from `from` is exact), quadratic for
 *   the pair (j at p−1, i at p) — j's arrival bounded below by the direct leg from `from` plus
 *   p−1 service times (haversine obeys the triangle inequality), then j's window, service and
 *   the leg j→i. So an ordering that meets every window pays nothing, and one the bound shows
 *   late pays at least B;
 * - one-hot: A·(1−Σ_p x_ip)² per stop and A·(1−Σ_i x_ip)² per position, A = B without time
 *   windows and 3B with them (a dropped stop then costs more than the ≤ 2 late terms it avoids).
 * max_distance_km is not in the QUBO (every measured ordering is scored exactly).
 */
export function routeQubo(
  model: RouteModel,
  stops: readonly number[],
  around: { before: readonly number[]; after: readonly number[] } = { before: [], after: [] },
): { n: number; q: Float64Array; offset: number; lateWeight: number } {
  const m = stops.length;
  const from = around.before[around.before.length - 1] ?? 0;
  const to = around.after[0] ?? 0;
  const n = m * m;
  const v = (i: number, p: number): number => i * m + p;
  const q = new Float64Array(n * n);
  const add = (a: number, b: number, w: number): void => {
    q[a * n + b] = q[a * n + b]! + w;
  };
  const dist = model.dist;
  let maxLeg = 0;
  for (const a of [from, to, ...stops]) for (const b of [from, to, ...stops]) maxLeg = Math.max(maxLeg, dist[a]![b]!);
  const lateWeight = (m + 1) * maxLeg + 1;
  const timed = [to, ...stops].some((s) => model.windows[s] !== undefined);
  const penalty = timed ? 3 * lateWeight : lateWeight;
  let offset = 0;
  for (let i = 0; i < m; i++) {
    add(v(i, 0), v(i, 0), dist[from]![stops[i]!]!);
    add(v(i, m - 1), v(i, m - 1), dist[stops[i]!]![to]!);
    for (let p = 0; p + 1 < m; p++) for (let j = 0; j < m; j++) if (j !== i) add(v(i, p), v(j, p + 1), dist[stops[i]!]![stops[j]!]!);
  }
  for (let a = 0; a < m; a++) {
    // one position per stop (row a) and one stop per position (column a)
    for (const line of [[...Array(m).keys()].map((p) => v(a, p)), [...Array(m).keys()].map((i) => v(i, a))]) {
      offset += penalty;
      for (let x = 0; x < m; x++) {
        add(line[x]!, line[x]!, -penalty);
        for (let y = x + 1; y < m; y++) add(line[x]!, line[y]!, 2 * penalty);
      }
    }
  }
  if (!timed) return { n, q, offset, lateWeight };
  // when the vehicle leaves `from`: departure for a whole route, else from the fixed prefix
  const leaveFrom =
    around.before.length === 0 ? model.departure : evaluateRoute(model, around.before).arrivals[around.before.length - 1]! + model.serviceMinutes;
  const lateCost = (node: number, arrival: number): number => {
    const w = model.windows[node];
    const late = w === undefined ? 0 : arrival - w.end;
    return late > QUBO_LATE_TOLERANCE_MINUTES ? lateWeight * (1 + late / (late + 60)) : 0;
  };
  const wait = (node: number, arrival: number): number => Math.max(arrival, node === 0 ? -Infinity : (model.windows[node]?.start ?? -Infinity));
  // the earliest stop j can be left when it is at position p
  const earliestLeave = (j: number, p: number): number =>
    wait(stops[j]!, leaveFrom + driveMinutes(model, dist[from]![stops[j]!]!) + p * model.serviceMinutes) + model.serviceMinutes;
  for (let i = 0; i < m; i++) {
    add(v(i, 0), v(i, 0), lateCost(stops[i]!, leaveFrom + driveMinutes(model, dist[from]![stops[i]!]!)));
    add(v(i, m - 1), v(i, m - 1), lateCost(to, earliestLeave(i, m - 1) + driveMinutes(model, dist[stops[i]!]![to]!)));
    for (let p = 1; p < m; p++) {
      for (let j = 0; j < m; j++) {
        if (j !== i) add(v(j, p - 1), v(i, p), lateCost(stops[i]!, earliestLeave(j, p - 1) + driveMinutes(model, dist[stops[j]!]![stops[i]!]!)));
      }
    }
  }
  return { n, q, offset, lateWeight };
}

/**
 * The ordering a measured bitstring `z` encodes in routeQubo's one-hot encoding (qubit i·m+p:
 * stop i at position p), as stop indices by position; undefined unless it has one stop per
 * position and one position per stop.
 */
export function oneHotOrder(z: number, m: number): number[] | undefined {
  const order: number[] = [];
  for (let p = 0; p < m; p++) {
    let at = -1;
    for (let i = 0; i < m; i++) {
      if (((z >> (i * m + p)) & 1) === 0) continue;
      if (at >= 0) return undefined;
      at = i;
    }
    if (at < 0) return undefined;
    order.push(at);
  }
  return new Set(order).size === m ? order : undefined;
}

/** The bitstring of an ordering (stop indices by position) in routeQubo's one-hot encoding. */
export function oneHotBits(perm: readonly number[], m: number): number {
  return perm.reduce((z, i, p) => z | (1 << (i * m + p)), 0);
}
