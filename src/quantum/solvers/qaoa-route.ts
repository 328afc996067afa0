import { ApiError } from '../../shared/api-error.ts';
import { quoteInput } from '../../shared/quote-input.ts';
import type { RouteProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit, type CircuitSummary } from './circuit-summary.ts';
import { quantumEvidence, quboToIsing, runQaoa, type QuantumEvidence } from './qaoa-runner.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * qaoa / route_optimization. nodes[0] is the depot; every other node is a stop visited once by
 * one vehicle. Distances are great-circle (haversine, mean Earth radius 6371.0088 km).
 *
 * One vehicle with at most MAX_QAOA_STOPS stops: QAOA on the one-hot position encoding
 * (m² qubits, see qaoaRoute). Several vehicles: stops are split by a sweep around the depot, one
 * QAOA per vehicle (decomposition). A route with more stops than MAX_QAOA_STOPS is built by
 * nearest neighbour + 2-opt and refined by QAOA windows (windowedQaoaRoute), labelled so.
 * Constraint violations are reported (`feasible: false`, `violations`), never hidden.
 */

export const MAX_QAOA_STOPS = 4;
/** Stops per QAOA window when a route is longer than MAX_QAOA_STOPS (9 qubits each). */
const ROUTE_WINDOW = 3;
/** Beyond this many windows per route the request would take too long: the route stays classical. */
const MAX_ROUTE_WINDOWS = 60;
/** Routes up to this many stops are also solved exactly by enumeration, to report the gap. */
const MAX_BRUTE_FORCE_STOPS = 8;
const EARTH_RADIUS_KM = 6371.0088;
export const DEFAULT_SPEED_KMH = 40;
export const DEFAULT_SERVICE_MINUTES = 5;
export const DEFAULT_DEPARTURE = '08:00';

export function haversineKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const hhmmOf = (minutes: number): string => {
  const m = Math.round(minutes);
  const day = Math.floor(m / 1440);
  const rest = m - day * 1440;
  const text = `${String(Math.floor(rest / 60)).padStart(2, '0')}:${String(rest % 60).padStart(2, '0')}`;
  return day > 0 ? `${text}+${day}d` : text;
};

interface RouteModel {
  dist: number[][];
  windows: ({ start: number; end: number } | undefined)[];
  speedKmh: number;
  serviceMinutes: number;
  departure: number;
  maxDistanceKm: number;
}

interface RouteEvaluation {
  distanceKm: number;
  lateMinutes: number;
  arrivals: number[];
}

/** Distance and schedule of depot → stops → depot (stops are node indices ≥ 1). */
function evaluateRoute(model: RouteModel, stops: readonly number[]): RouteEvaluation {
  let distanceKm = 0;
  let lateMinutes = 0;
  let t = model.departure;
  let at = 0;
  const arrivals: number[] = [];
  for (const s of [...stops, 0]) {
    const leg = model.dist[at]![s]!;
    distanceKm += leg;
    t += (leg / model.speedKmh) * 60;
    const w = model.windows[s];
    if (w !== undefined) {
      if (t < w.start && s !== 0) t = w.start;
      if (t > w.end) lateMinutes += t - w.end;
    }
    arrivals.push(t);
    if (s !== 0) t += model.serviceMinutes;
    at = s;
  }
  return { distanceKm, lateMinutes, arrivals };
}

/** The cost QAOA and every search minimise: length plus heavy penalties for violations. */
function penalisedCost(model: RouteModel, e: RouteEvaluation, scale: number): number {
  const over = Math.max(0, e.distanceKm - model.maxDistanceKm);
  return e.distanceKm + scale * (over / Math.max(1e-9, model.maxDistanceKm) + e.lateMinutes / 60 + (over > 0 || e.lateMinutes > 0 ? 1 : 0));
}

function* permutations(items: number[]): Generator<number[]> {
  if (items.length <= 1) {
    yield [...items];
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)];
    for (const p of permutations(rest)) yield [items[i]!, ...p];
  }
}

function bruteForce(model: RouteModel, stops: number[], scale: number): { order: number[]; cost: number } {
  let best = { order: stops, cost: Infinity };
  for (const p of permutations(stops)) {
    const cost = penalisedCost(model, evaluateRoute(model, p), scale);
    if (cost < best.cost - 1e-12) best = { order: p, cost };
  }
  return best;
}

function nearestNeighbourTwoOpt(model: RouteModel, stops: number[], scale: number): number[] {
  const left = new Set(stops);
  const order: number[] = [];
  let at = 0;
  while (left.size > 0) {
    let next = -1;
    for (const s of left) if (next < 0 || model.dist[at]![s]! < model.dist[at]![next]!) next = s;
    order.push(next);
    left.delete(next);
    at = next;
  }
  return twoOpt(model, order, scale);
}

/**
 * 2-opt: reverses segments while that lowers the cost, to a local optimum. Without time windows
 * the cost is the length (plus a penalty that only grows with it), so each move is scored in O(1)
 * from the four edges it changes; with time windows every candidate route is re-timed, within
 * a budget of TWO_OPT_BUDGET node visits.
 */
const TWO_OPT_BUDGET = 5e7;

export function twoOpt(model: RouteModel, order: number[], scale: number): number[] {
  if (model.windows.every((w) => w === undefined)) {
    const tour = [0, ...order, 0];
    const d = model.dist;
    let improved = true;
    while (improved) {
      improved = false;
      for (let i = 1; i < tour.length - 2; i++) {
        for (let j = i + 1; j < tour.length - 1; j++) {
          const a = tour[i - 1]!;
          const b = tour[i]!;
          const c = tour[j]!;
          const e = tour[j + 1]!;
          if (d[a]![c]! + d[b]![e]! < d[a]![b]! + d[c]![e]! - 1e-9) {
            for (let x = i, y = j; x < y; x++, y--) [tour[x], tour[y]] = [tour[y]!, tour[x]!];
            improved = true;
          }
        }
      }
    }
    return tour.slice(1, -1);
  }
  let best = [...order];
  let bestCost = penalisedCost(model, evaluateRoute(model, best), scale);
  let budget = TWO_OPT_BUDGET;
  let improved = true;
  while (improved && budget > 0) {
    improved = false;
    for (let i = 0; i < best.length - 1 && budget > 0; i++) {
      for (let j = i + 1; j < best.length && budget > 0; j++) {
        const candidate = [...best.slice(0, i), ...best.slice(i, j + 1).reverse(), ...best.slice(j + 1)];
        budget -= candidate.length + 1;
        const cost = penalisedCost(model, evaluateRoute(model, candidate), scale);
        if (cost < bestCost - 1e-9) {
          best = candidate;
          bestCost = cost;
          improved = true;
        }
      }
    }
  }
  return best;
}

interface SubRoute {
  order: number[];
  method: string;
  energy: number;
  depth: number;
  optimalCount: number;
  circuit?: CircuitSummary;
  exactCost?: number;
  /** One entry per QAOA circuit run for this route (see quantumEvidence). */
  quantum?: QuantumEvidence[];
  /** QAOA circuits run for this route (each sampled ctx.shots times). */
  circuitsRun?: number;
  /** Optimal-count summed over those circuits (windows whose result was discarded included). */
  optimalTotal?: number;
}

/**
 * QAOA over the one-hot encoding of `stops` (m = stops.length ≤ MAX_QAOA_STOPS): qubit i·m+p
 * says "stop i is visited at position p". The cost is the textbook TSP QUBO — the length of
 * depot → … → depot plus A·(1-Σ_p x_ip)² per stop and A·(1-Σ_i x_ip)² per position — so the
 * circuit is real RZ/RZZ layers. Time windows and max_distance_km are not in the QUBO: every
 * measured valid ordering is scored exactly (length plus violation penalties) and the best is kept.
 */
function qaoaRoute(
  model: RouteModel,
  stops: number[],
  scale: number,
  ctx: SolverContext,
  includeQasm: boolean | undefined,
  around: { before: number[]; after: number[] } = { before: [], after: [] },
): { order: number[] | undefined; energy: number; depth: number; optimalCount: number; circuit: CircuitSummary; quantum: QuantumEvidence & { p_valid: number } } {
  const m = stops.length;
  // the window's neighbours on the full route (the depot for a whole route)
  const from = around.before[around.before.length - 1] ?? 0;
  const to = around.after[0] ?? 0;
  const n = m * m;
  const v = (i: number, p: number): number => i * m + p;
  const q = new Float64Array(n * n);
  const add = (a: number, b: number, w: number): void => {
    q[a * n + b] = q[a * n + b]! + w;
  };
  let maxLeg = 0;
  for (const a of [from, to, ...stops]) for (const b of [from, to, ...stops]) maxLeg = Math.max(maxLeg, model.dist[a]![b]!);
  const penalty = (m + 1) * maxLeg + 1;
  let offset = 0;
  for (let i = 0; i < m; i++) {
    add(v(i, 0), v(i, 0), model.dist[from]![stops[i]!]!);
    add(v(i, m - 1), v(i, m - 1), model.dist[stops[i]!]![to]!);
    for (let p = 0; p + 1 < m; p++) for (let j = 0; j < m; j++) if (j !== i) add(v(i, p), v(j, p + 1), model.dist[stops[i]!]![stops[j]!]!);
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
  const run = runQaoa(n, quboToIsing(n, q, offset), { shots: ctx.shots, rng: ctx.rng, layers: 2, threads: ctx.threads, sample: ctx.sample });
  const decode = (z: number): number[] | undefined => {
    const order: number[] = [];
    for (let p = 0; p < m; p++) {
      let at = -1;
      for (let i = 0; i < m; i++) {
        if (((z >> v(i, p)) & 1) === 0) continue;
        if (at >= 0) return undefined;
        at = i;
      }
      if (at < 0) return undefined;
      order.push(at);
    }
    return new Set(order).size === m ? order.map((i) => stops[i]!) : undefined;
  };
  let best: { z: number; order: number[]; cost: number } | undefined;
  for (const z of run.counts.keys()) {
    const order = decode(z);
    if (order === undefined) continue;
    const cost = penalisedCost(model, evaluateRoute(model, [...around.before, ...order, ...around.after]), scale);
    if (best === undefined || cost < best.cost - 1e-12) best = { z, order, cost };
  }
  // the optimal orderings of this (sub-)problem, by enumeration (m ≤ MAX_QAOA_STOPS), as bitstrings
  const costs = [...permutations([...Array(m).keys()])].map((perm) => ({
    perm,
    cost: penalisedCost(model, evaluateRoute(model, [...around.before, ...perm.map((i) => stops[i]!), ...around.after]), scale),
  }));
  const least = Math.min(...costs.map((c) => c.cost));
  const optimal = costs.filter((c) => c.cost <= least + 1e-9).map((c) => c.perm.reduce((z, i, p) => z | (1 << v(i, p)), 0));
  const circuit = summarizeCircuit(run.circuit, includeQasm);
  return {
    order: best?.order,
    energy: run.energy,
    depth: circuit.depth,
    optimalCount: best === undefined ? 0 : (run.counts.get(best.z) ?? 0),
    circuit,
    // p_valid: the probability of measuring any valid ordering at all (one-hot in both directions)
    quantum: { ...quantumEvidence(run.state, optimal), p_valid: Number(quantumEvidence(run.state, costs.map((c) => c.perm.reduce((z, i, p) => z | (1 << v(i, p)), 0))).p_optimal.toPrecision(6)) },
  };
}

/**
 * A route too long for one QAOA: built by nearest neighbour + 2-opt, then re-ordered window by
 * window — each run of ROUTE_WINDOW consecutive stops is a QAOA sub-problem with its neighbours
 * fixed (ROUTE_WINDOW² qubits), kept when it does not make the route worse — then 2-opt again.
 */
function windowedQaoaRoute(model: RouteModel, stops: number[], scale: number, ctx: SolverContext, includeQasm: boolean | undefined): SubRoute {
  let order = nearestNeighbourTwoOpt(model, stops, scale);
  const cost = (o: number[]): number => penalisedCost(model, evaluateRoute(model, o), scale);
  if (Math.ceil(order.length / ROUTE_WINDOW) > MAX_ROUTE_WINDOWS) {
    return { order, method: 'nearest_neighbour_2opt', energy: cost(order), depth: 0, optimalCount: 0 };
  }
  let energy = 0;
  let depth = 0;
  let optimalCount = 0;
  let optimalTotal = 0;
  let circuit: CircuitSummary | undefined;
  const quantum: QuantumEvidence[] = [];
  for (let start = 0; start + 1 < order.length; start += ROUTE_WINDOW) {
    const before = order.slice(0, start);
    const after = order.slice(start + ROUTE_WINDOW);
    const window = order.slice(start, start + ROUTE_WINDOW);
    const sub = qaoaRoute(model, window, scale, ctx, includeQasm && circuit === undefined, { before, after });
    energy += sub.energy;
    depth = Math.max(depth, sub.depth);
    optimalCount = Math.max(optimalCount, sub.optimalCount);
    optimalTotal += sub.optimalCount;
    circuit ??= sub.circuit;
    quantum.push(sub.quantum);
    if (sub.order !== undefined) {
      const candidate = [...before, ...sub.order, ...after];
      if (cost(candidate) <= cost(order)) order = candidate;
    }
  }
  order = twoOpt(model, order, scale);
  return { order, method: 'qaoa_windows_2opt', energy, depth, optimalCount, optimalTotal, quantum, circuitsRun: quantum.length, ...(circuit === undefined ? {} : { circuit }) };
}

/**
 * Every cut point is searched up to this many stops (arcs scored by nearest neighbour + 2-opt)
 * and this much DP work (stops³·vehicles); beyond, each sweep start is cut into equal counts.
 */
const SPLIT_SEARCH_MAX_STOPS = 40;
const SPLIT_SEARCH_BUDGET = 5e7;

/**
 * Splits the stops among vehicles by a sweep around the depot: stops sorted by bearing
 * (longitude scaled by cos(latitude), so bearings are true on the map), then cut into contiguous
 * arcs, one per vehicle (an arc may be empty: that vehicle stays home). Every start of the
 * sweep is tried and, up to SPLIT_SEARCH_MAX_STOPS stops, every set of cut points (a DP over
 * unequal counts); an arc is scored by the length of its route (the shorter of the sweep order
 * and nearest neighbour + 2-opt; in larger instances arcs over 12 stops use the sweep order
 * only), and splits are ranked by (arcs over max_distance_km, total excess, total length).
 * Larger instances cut each start into equal counts.
 */
function sweep(model: RouteModel, nodes: RouteProblem['nodes'], vehicles: number, scale: number): number[][] {
  const depot = nodes[0]!;
  const cosLat = Math.cos((depot.lat * Math.PI) / 180);
  const sorted = nodes
    .slice(1)
    .map((n, i) => ({ index: i + 1, angle: Math.atan2(n.lat - depot.lat, (n.lng - depot.lng) * cosLat) }))
    .sort((a, b) => a.angle - b.angle || a.index - b.index)
    .map((x) => x.index);
  const count = sorted.length;
  const arcCache = new Map<string, number>();
  const arcLength = (first: number, length: number): number => {
    if (length === 0) return 0;
    const key = `${first % count}:${length}`;
    const cached = arcCache.get(key);
    if (cached !== undefined) return cached;
    const stops = Array.from({ length }, (_, k) => sorted[(first + k) % count]!);
    let km = evaluateRoute(model, stops).distanceKm;
    if (length <= 12 || count <= SPLIT_SEARCH_MAX_STOPS) km = Math.min(km, evaluateRoute(model, nearestNeighbourTwoOpt(model, stops, scale)).distanceKm);
    arcCache.set(key, km);
    return km;
  };
  type Score = [number, number, number];
  const scoreOf = (km: number): Score => (km > model.maxDistanceKm + 1e-9 ? [1, km - model.maxDistanceKm, km] : [0, 0, km]);
  const add = (a: Score, b: Score): Score => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
  const less = (a: Score, b: Score): boolean => a[0] !== b[0] ? a[0] < b[0] : Math.abs(a[1] - b[1]) > 1e-9 ? a[1] < b[1] : a[2] < b[2] - 1e-9;
  const full = count <= SPLIT_SEARCH_MAX_STOPS && count * count * count * vehicles <= SPLIT_SEARCH_BUDGET;
  let best: { score: Score; groups: number[][] } | undefined;
  for (let rotation = 0; rotation < Math.max(1, count); rotation++) {
    let cuts: number[];
    if (full) {
      // dp[v][j]: best score covering the first j stops (of this rotation) with v vehicles
      const dp: { score: Score; from: number }[][] = [Array.from({ length: count + 1 }, (_, j) => ({ score: j === 0 ? [0, 0, 0] : [Infinity, Infinity, Infinity], from: -1 }))];
      for (let v = 1; v <= vehicles; v++) {
        const row: { score: Score; from: number }[] = [];
        for (let j = 0; j <= count; j++) {
          let cell = { score: [Infinity, Infinity, Infinity] as Score, from: -1 };
          for (let i = 0; i <= j; i++) {
            const prev = dp[v - 1]![i]!;
            if (!Number.isFinite(prev.score[0])) continue;
            const candidate = add(prev.score, scoreOf(arcLength(rotation + i, j - i)));
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
    let score: Score = [0, 0, 0];
    for (let v = 0; v < vehicles; v++) {
      const length = cuts[v + 1]! - cuts[v]!;
      groups.push(Array.from({ length }, (_, k) => sorted[(rotation + cuts[v]! + k) % count]!));
      score = add(score, scoreOf(arcLength(rotation + cuts[v]!, length)));
    }
    if (best === undefined || less(score, best.score)) best = { score, groups };
  }
  return best!.groups;
}

export function solveRoute(problem: RouteProblem, ctx: SolverContext): SolverOutput {
  const { nodes, constraints } = problem;
  const indexOf = new Map(nodes.map((n, i) => [n.id, i]));
  const windows: RouteModel['windows'] = new Array(nodes.length).fill(undefined);
  (constraints.time_windows ?? []).forEach((w, i) => {
    const at = indexOf.get(w.node);
    if (at === undefined) throw ApiError.unprocessable(`Invalid 'problem.constraints.time_windows.${i}.node': no node has id ${quoteInput(w.node)}`, `problem.constraints.time_windows.${i}.node`);
    if (minutesOf(w.end) < minutesOf(w.start)) throw ApiError.unprocessable(`Invalid 'problem.constraints.time_windows.${i}': end is before start`, `problem.constraints.time_windows.${i}.end`);
    windows[at] = { start: minutesOf(w.start), end: minutesOf(w.end) };
  });
  const model: RouteModel = {
    dist: nodes.map((a) => nodes.map((b) => haversineKm(a, b))),
    windows,
    speedKmh: problem.speed_kmh ?? DEFAULT_SPEED_KMH,
    serviceMinutes: problem.service_minutes ?? DEFAULT_SERVICE_MINUTES,
    departure: minutesOf(problem.departure_time ?? DEFAULT_DEPARTURE),
    maxDistanceKm: constraints.max_distance_km,
  };
  // A penalty unit larger than any route can be long, so violations always dominate distance.
  let scale = 1;
  for (const row of model.dist) for (const d of row) scale += 2 * d;

  const vehicles = constraints.vehicle_count;
  const groups = vehicles === 1 ? [nodes.slice(1).map((_, i) => i + 1)] : sweep(model, nodes, vehicles, scale);
  const includeQasm = problem.options?.include_qasm;
  const subs: SubRoute[] = groups.map((stops) => {
    if (stops.length <= 1) return { order: stops, method: 'trivial', energy: penalisedCost(model, evaluateRoute(model, stops), scale), depth: 0, optimalCount: 0 };
    if (stops.length <= MAX_QAOA_STOPS) {
      const { quantum, ...sub } = qaoaRoute(model, stops, scale, ctx, includeQasm);
      const exactCost = bruteForce(model, stops, scale).cost;
      // no valid ordering among the shots: say so and build the route classically
      if (sub.order === undefined) return { ...sub, order: nearestNeighbourTwoOpt(model, stops, scale), method: 'nearest_neighbour_2opt', exactCost, quantum: [quantum], circuitsRun: 1 };
      return { ...sub, order: sub.order, method: 'qaoa', exactCost, quantum: [quantum], circuitsRun: 1 };
    }
    const sub = windowedQaoaRoute(model, stops, scale, ctx, includeQasm);
    return stops.length <= MAX_BRUTE_FORCE_STOPS ? { ...sub, exactCost: bruteForce(model, stops, scale).cost } : sub;
  });

  const id = (i: number): string => nodes[i]!.id;
  const violations: string[] = [];
  const described = subs.map((sub, v) => {
    const e = evaluateRoute(model, sub.order);
    if (sub.order.length > 0 && e.distanceKm > model.maxDistanceKm + 1e-9) {
      violations.push(`vehicle ${v + 1} route is ${e.distanceKm.toFixed(2)} km, over max_distance_km ${model.maxDistanceKm}`);
    }
    sub.order.forEach((s, k) => {
      const w = model.windows[s];
      if (w !== undefined && e.arrivals[k]! > w.end + 1e-9) violations.push(`arrives at ${id(s)} at ${hhmmOf(e.arrivals[k]!)}, after its window ends at ${hhmmOf(w.end)}`);
    });
    const back = e.arrivals[e.arrivals.length - 1]!;
    const depotWindow = model.windows[0];
    if (sub.order.length > 0 && depotWindow !== undefined && back > depotWindow.end + 1e-9) {
      violations.push(`vehicle ${v + 1} returns to ${id(0)} at ${hhmmOf(back)}, after its window ends at ${hhmmOf(depotWindow.end)}`);
    }
    const stops = sub.order.length === 0 ? [] : [id(0), ...sub.order.map(id), id(0)];
    const schedule = sub.order.map((s, k) => ({ node: id(s), arrival: hhmmOf(e.arrivals[k]!) }));
    return { e, stops, schedule, sub };
  });

  const methods = new Set(subs.filter((s) => s.method !== 'trivial').map((s) => s.method));
  const method =
    methods.size === 0 ? 'trivial'
    : methods.size === 1 && vehicles === 1 ? [...methods][0]!
    : methods.has('qaoa') || methods.has('qaoa_windows_2opt') ? (methods.size === 1 && methods.has('qaoa') ? 'qaoa_decomposed' : 'qaoa_decomposed_hybrid')
    : [...methods][0]!;
  const totalKm = described.reduce((sum, d) => sum + d.e.distanceKm, 0);
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  const circuits = subs.filter((s) => s.circuit !== undefined);
  const solution: Record<string, unknown> = { method };
  if (vehicles === 1) {
    const only = described[0]!;
    Object.assign(solution, { route: only.stops, cost: round(only.e.distanceKm), unit: 'km', schedule: only.schedule });
  } else {
    Object.assign(solution, {
      routes: described.map((d, v) => ({ vehicle: v + 1, stops: d.stops, distance_km: round(d.e.distanceKm), method: d.sub.method, schedule: d.schedule })),
      cost: round(totalKm),
      unit: 'km',
    });
  }
  solution['feasible'] = violations.length === 0;
  if (violations.length > 0) solution['violations'] = violations;
  // The exact optimum per route, where enumeration is cheap, and how far the answer is from it.
  if (subs.every((s) => s.exactCost !== undefined || s.method === 'trivial') && subs.some((s) => s.exactCost !== undefined)) {
    const exact = subs.reduce((sum, s) => sum + (s.exactCost ?? penalisedCost(model, evaluateRoute(model, s.order), scale)), 0);
    const found = subs.reduce((sum, s) => sum + penalisedCost(model, evaluateRoute(model, s.order), scale), 0);
    // Penalties add at least `scale`, so a penalised optimum that large proves no feasible route exists.
    if (exact >= scale) {
      solution['classical_optimum'] = null;
      solution['infeasible_reason'] =
        vehicles === 1
          ? 'no ordering of the stops meets max_distance_km and the time windows (checked exhaustively)'
          : 'for this split of the stops among vehicles, no ordering meets max_distance_km and the time windows (each route checked exhaustively; the split itself is a heuristic sweep, so another split may be feasible)';
    } else {
      solution['classical_optimum'] = round(exact);
      solution['optimality_gap'] = exact > 0 ? Math.max(0, round((found - exact) / exact)) : 0;
    }
    if (vehicles > 1) solution['classical_optimum_scope'] = 'per vehicle, for the given split of stops';
  }
  const circuitsRun = subs.reduce((sum, s) => sum + (s.circuitsRun ?? 0), 0);
  solution['circuits_run'] = circuitsRun;
  solution['total_shots'] = circuitsRun * ctx.shots;
  solution['optimal_count_total'] = subs.reduce((sum, s) => sum + (s.optimalTotal ?? s.optimalCount), 0);
  const evidence = subs.flatMap((s) => s.quantum ?? []);
  if (evidence.length === 1) solution['quantum'] = evidence[0];
  else if (evidence.length > 1) solution['quantum'] = evidence;
  if (circuits.length === 1) solution['circuit'] = circuits[0]!.circuit;
  else if (circuits.length > 1) solution['circuits'] = circuits.map((s) => s.circuit);
  solution['assumptions'] = { speed_kmh: model.speedKmh, service_minutes: model.serviceMinutes, departure_time: hhmmOf(model.departure), depot: id(0) };
  return {
    solution,
    meta: {
      shots: ctx.shots,
      // per circuit, so never above shots: the best count any one circuit measured (totals in solution)
      optimal_count: subs.reduce((max, s) => Math.max(max, s.optimalCount), 0),
      energy: subs.reduce((sum, s) => sum + s.energy, 0),
      depth: subs.reduce((max, s) => Math.max(max, s.depth), 0),
    },
  };
}
