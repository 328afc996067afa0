import type { RouteProblem } from '../solve-schemas.ts';
import { nearestNeighbourTwoOpt } from './exhaustive-two-opt.ts';
import { evaluateRoute, hasWindows, penalisedCost, type RouteModel } from './route-model.ts';

/**
 * Every cut point is searched up to this many stops (arcs scored by nearest neighbour + 2-opt)
 * and this much DP work (stops³·vehicles); beyond, each sweep start is cut into equal counts.
 */
const SPLIT_SEARCH_MAX_STOPS = 40;
const SPLIT_SEARCH_BUDGET = 5e7;

/**
 * Splits the stops among vehicles by a sweep around the depot: stops sorted by bearing
 * (longitude scaled by cos(latitude), so bearings are true on the map), then cut into contiguous
 * arcs, one per vehicle. Every start of the sweep is tried and, up to SPLIT_SEARCH_MAX_STOPS
 * stops, every set of cut points (a DP over unequal counts); an arc is scored by the length of
 * its route (the least penalised of the sweep order, nearest neighbour + 2-opt — in larger
 * instances only for arcs of up to 12 stops — and, with time windows, window-end order), and
 * splits are ranked by (arcs breaking max_distance_km or a window, total excess km, total
 * minutes late, idle vehicles, total length): a user who asks for k vehicles gets k routes
 * whenever the stops can be shared within the constraints — one long tour is often shorter in
 * total, but it is not what was asked for. Only with fewer stops than vehicles, or when
 * sharing breaks a constraint, does a vehicle stay home. Larger instances cut each
 * start into equal counts.
 */
export function sweepSplit(model: RouteModel, nodes: RouteProblem['nodes'], vehicles: number, scale: number): number[][] {
  const depot = nodes[0]!;
  const cosLat = Math.cos((depot.lat * Math.PI) / 180);
  const sorted = nodes
    .slice(1)
    .map((n, i) => ({ index: i + 1, angle: Math.atan2(n.lat - depot.lat, (n.lng - depot.lng) * cosLat) }))
    .sort((a, b) => a.angle - b.angle || a.index - b.index)
    .map((x) => x.index);
  const count = sorted.length;
  const timed = hasWindows(model);
  const untimed: RouteModel = { ...model, windows: [] };
  const arcCache = new Map<string, { km: number; late: number }>();
  /** The arc's route: the least penalised of the sweep order, nearest neighbour + 2-opt and (with time windows) window-end order. */
  const arcRoute = (first: number, length: number): { km: number; late: number } => {
    if (length === 0) return { km: 0, late: 0 };
    const key = `${first % count}:${length}`;
    const cached = arcCache.get(key);
    if (cached !== undefined) return cached;
    const stops = Array.from({ length }, (_, k) => sorted[(first + k) % count]!);
    const orders = [stops];
    // 2-opt on length alone: re-timing every 2-opt candidate for every arc would be too slow here
    if (length <= 12 || count <= SPLIT_SEARCH_MAX_STOPS) orders.push(nearestNeighbourTwoOpt(untimed, stops, scale));
    if (timed) orders.push([...stops].sort((a, b) => (model.windows[a]?.end ?? Infinity) - (model.windows[b]?.end ?? Infinity) || a - b));
    let best = { km: Infinity, late: Infinity, cost: Infinity };
    for (const order of orders) {
      const e = evaluateRoute(model, order);
      const cost = penalisedCost(model, e, scale);
      if (cost < best.cost) best = { km: e.distanceKm, late: e.lateMinutes, cost };
    }
    const arc = { km: best.km, late: best.late };
    arcCache.set(key, arc);
    return arc;
  };
  // (arcs breaking a constraint, total excess km, total minutes late, idle vehicles, total km), compared in that order
  type Score = [number, number, number, number, number];
  const scoreOf = ({ km, late }: { km: number; late: number }, stops: number): Score => {
    const over = Math.max(0, km - model.maxDistanceKm);
    return [over > 1e-9 || late > 0 ? 1 : 0, over, late, stops === 0 ? 1 : 0, km];
  };
  const add = (a: Score, b: Score): Score => [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]];
  const less = (a: Score, b: Score): boolean =>
    a[0] !== b[0] ? a[0] < b[0]
    : Math.abs(a[1] - b[1]) > 1e-9 ? a[1] < b[1]
    : Math.abs(a[2] - b[2]) > 1e-9 ? a[2] < b[2]
    : a[3] !== b[3] ? a[3] < b[3]
    : a[4] < b[4] - 1e-9;
  const none: Score = [Infinity, Infinity, Infinity, Infinity, Infinity];
  const full = count <= SPLIT_SEARCH_MAX_STOPS && count * count * count * vehicles <= SPLIT_SEARCH_BUDGET;
  let best: { score: Score; groups: number[][] } | undefined;
  for (let rotation = 0; rotation < Math.max(1, count); rotation++) {
    let cuts: number[];
    if (full) {
      // dp[v][j]: best score covering the first j stops (of this rotation) with v vehicles
      const dp: { score: Score; from: number }[][] = [Array.from({ length: count + 1 }, (_, j) => ({ score: j === 0 ? ([0, 0, 0, 0, 0] as Score) : none, from: -1 }))];
      for (let v = 1; v <= vehicles; v++) {
        const row: { score: Score; from: number }[] = [];
        for (let j = 0; j <= count; j++) {
          let cell = { score: none, from: -1 };
          for (let i = 0; i <= j; i++) {
            const prev = dp[v - 1]![i]!;
            if (!Number.isFinite(prev.score[0])) continue;
            const candidate = add(prev.score, scoreOf(arcRoute(rotation + i, j - i), j - i));
            if (cell.from < 0 || less(candidate, cell.score)) cell = { score: candidate, from: i };
          }
          row.push(cell);
        }
        dp.push(row);
      }
      cuts = [count];
      for (let v = vehicles, j = count; v > 0; v--) {
        j = dp[v]![j]!.from;
        cuts.unshift(j);
      }
    } else {
      cuts = Array.from({ length: vehicles + 1 }, (_, v) => Math.floor((v * count) / vehicles));
    }
    const groups: number[][] = [];
    let score: Score = [0, 0, 0, 0, 0];
    for (let v = 0; v < vehicles; v++) {
      const length = cuts[v + 1]! - cuts[v]!;
      groups.push(Array.from({ length }, (_, k) => sorted[(rotation + cuts[v]! + k) % count]!));
      score = add(score, scoreOf(arcRoute(rotation + cuts[v]!, length), length));
    }
    if (best === undefined || less(score, best.score)) best = { score, groups };
  }
  return best!.groups;
}
