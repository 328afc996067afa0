import { ApiError } from '../../shared/api-error.ts';
import { quoteInput } from '../../shared/quote-input.ts';
import type { RouteProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit, type CircuitSummary } from './circuit-summary.ts';
import { countsFields, countsLimit, measurementCounts, type MeasurementCounts } from './measurement-counts.ts';
import { HELD_KARP_MAX_STOPS, heldKarpRoute } from './held-karp-route.ts';
import { oneTreeBound } from './one-tree-bound.ts';
import { quantumEvidence, quboToIsing, runQaoa, type QuantumEvidence } from './qaoa-runner.ts';
import { exhaustiveTwoOpt, nearestNeighbourTwoOpt } from './exhaustive-two-opt.ts';
import { routeLocalSearch } from './route-local-search.ts';
import { lowerBoundFigures, optimumFigures, reportedKm } from './route-optimum-figures.ts';
import { evaluateRoute, hasWindows, isFeasible, LATE_TOLERANCE_MINUTES, penalisedCost, type RouteModel } from './route-model.ts';
import { oneHotBits, oneHotOrder, routeQubo } from './route-qubo.ts';
import { roundUp } from './safe-rounding.ts';
import type { SolverContext } from './solver-context.ts';
import { sweepSplit } from './sweep-split.ts';

/**
 * qaoa / route_optimization. nodes[0] is the depot; every other node is a stop visited once by
 * one vehicle. Distances are great-circle (haversine, mean Earth radius 6371.0088 km).
 *
 * Each vehicle's route is solved by every method that applies, and the best feasible route any
 * of them found is the answer (`method` names the one that found it):
 * - quantum: QAOA on the one-hot position encoding (m² qubits) up to MAX_QAOA_STOPS stops; beyond,
 *   nearest neighbour + 2-opt re-ordered by QAOA windows of ROUTE_WINDOW stops (windowedQaoaRoute);
 * - exact: Held-Karp up to HELD_KARP_MAX_STOPS stops, time windows as a hard constraint;
 * - local search: 2-opt + Or-opt + relocate with neighbour lists (route-local-search.ts), with
 *   the Held-Karp 1-tree lower bound and the gap to it beyond the exact range.
 * The quantum run's own route and figures are reported beside the answer. Several vehicles:
 * stops are split by a sweep around the depot, every vehicle used when the stops allow it.
 * Constraint violations are reported (`feasible: false`, `violations`), never hidden.
 */

export const MAX_QAOA_STOPS = 4;
/** Stops per QAOA window when a route is longer than MAX_QAOA_STOPS (9 qubits each). */
const ROUTE_WINDOW = 3;
/** Beyond this many windows per route the request would take too long: no quantum part runs. */
const MAX_ROUTE_WINDOWS = 60;
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
/**
 * HH:MM, rounded up to the minute (less LATE_TOLERANCE_MINUTES, which is no lateness): a stop
 * on time is never shown after its window's end, and a late one always is — to the nearest
 * minute, 10:00.3 read "arrives at 10:00, after its window ends at 10:00".
 */
const hhmmOf = (minutes: number): string => {
  const m = roundUp(minutes - LATE_TOLERANCE_MINUTES, 0);
  const day = Math.floor(m / 1440);
  const rest = m - day * 1440;
  const text = `${String(Math.floor(rest / 60)).padStart(2, '0')}:${String(rest % 60).padStart(2, '0')}`;
  return day > 0 ? `${text}+${day}d` : text;
};

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

/** What the quantum part of one route produced: its own best route and the circuits' figures. */
interface QuantumRoute {
  method: 'qaoa' | 'qaoa_windows_2opt';
  /** Its best route; undefined when no valid ordering was measured. */
  order: number[] | undefined;
  energy: number;
  depth: number;
  /** Shots that measured its route (the best count of any one circuit, for windows). */
  optimalCount: number;
  circuit?: CircuitSummary;
  /** One entry per QAOA circuit run for this route (see quantumEvidence). */
  quantum: QuantumEvidence[];
  /** QAOA circuits run for this route (each sampled ctx.shots times). */
  circuitsRun: number;
  /** Optimal-count summed over those circuits (windows whose result was discarded included). */
  optimalTotal: number;
  /** The top outcomes of its one circuit, when asked for (`options.include_counts`); `route` holds node indices. */
  counts?: MeasurementCounts;
}
/**
 * QAOA (p = 2) on routeQubo for `stops` (m ≤ MAX_QAOA_STOPS, m² qubits): real RZ/RZZ layers.
 * Every measured valid ordering is then scored exactly on the whole route (length plus
 * violation penalties) and the best is kept.
 */
function qaoaRoute(
  model: RouteModel,
  stops: number[],
  scale: number,
  ctx: SolverContext,
  includeQasm: boolean | undefined,
  around: { before: number[]; after: number[] } = { before: [], after: [] },
  countsTopK?: number,
): { order: number[] | undefined; energy: number; depth: number; optimalCount: number; circuit: CircuitSummary; quantum: QuantumEvidence & { p_valid: number }; counts?: MeasurementCounts } {
  const m = stops.length;
  const { n, q, offset } = routeQubo(model, stops, around);
  const run = runQaoa(n, quboToIsing(n, q, offset), { shots: ctx.shots, rng: ctx.rng, layers: 2, threads: ctx.threads, sample: ctx.sample });
  // a measured bitstring read as an ordering of the stops (undefined: not one-hot both ways)
  const decode = (z: number): number[] | undefined => oneHotOrder(z, m)?.map((i) => stops[i]!);
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
  const optimal = costs.filter((c) => c.cost <= least + 1e-9).map((c) => oneHotBits(c.perm, m));
  const circuit = summarizeCircuit(run.circuit, includeQasm);
  // each outcome read as an ordering of the stops (null: not one stop per position)
  const counts = countsTopK === undefined ? undefined : measurementCounts(run.counts, n, countsTopK, new Set(optimal), (z) => ({ route: decode(z) ?? null }));
  return {
    ...(counts === undefined ? {} : { counts }),
    order: best?.order,
    energy: run.energy,
    depth: circuit.depth,
    optimalCount: best === undefined ? 0 : (run.counts.get(best.z) ?? 0),
    circuit,
    // p_valid: the probability of measuring any valid ordering at all (one-hot in both directions)
    quantum: { ...quantumEvidence(run.state, optimal), p_valid: Number(quantumEvidence(run.state, costs.map((c) => oneHotBits(c.perm, m))).p_optimal.toPrecision(6)) },
  };
}

/**
 * The quantum part of a route too long for one QAOA: built by nearest neighbour + 2-opt, then
 * re-ordered window by window — each run of ROUTE_WINDOW consecutive stops is a QAOA
 * sub-problem with its neighbours fixed (ROUTE_WINDOW² qubits), kept when it does not make the
 * route worse — then 2-opt again. Undefined beyond MAX_ROUTE_WINDOWS windows (too slow).
 */
function windowedQaoaRoute(model: RouteModel, stops: number[], scale: number, ctx: SolverContext, includeQasm: boolean | undefined): QuantumRoute | undefined {
  if (Math.ceil(stops.length / ROUTE_WINDOW) > MAX_ROUTE_WINDOWS) return undefined;
  let order = nearestNeighbourTwoOpt(model, stops, scale);
  const cost = (o: number[]): number => penalisedCost(model, evaluateRoute(model, o), scale);
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
  order = exhaustiveTwoOpt(model, order, scale);
  return { method: 'qaoa_windows_2opt', order, energy, depth, optimalCount, optimalTotal, quantum, circuitsRun: quantum.length, ...(circuit === undefined ? {} : { circuit }) };
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
  const groups = vehicles === 1 ? [nodes.slice(1).map((_, i) => i + 1)] : sweepSplit(model, nodes, vehicles, scale);
  const includeQasm = problem.options?.include_qasm;
  const countsTopK = countsLimit(problem.options);
  const answers = groups.map((stops) => solveOneRoute(model, stops, scale, ctx, includeQasm, countsTopK));

  const id = (i: number): string => nodes[i]!.id;
  const violations: string[] = [];
  const routeOf = (order: readonly number[]): string[] => (order.length === 0 ? [] : [id(0), ...order.map(id), id(0)]);
  /**
   * The counts of a route's one QAOA circuit with each outcome's ordering as node ids (depot to
   * depot). A route settled window by window ran several circuits: no single histogram is its.
   */
  const countsOf = (q: QuantumRoute): Record<string, unknown> =>
    countsFields(problem.options, () => {
      if (q.counts === undefined) return 'the route was improved window by window, one QAOA circuit per window';
      const outcomes = q.counts.outcomes.map((o) => ({ ...o, route: Array.isArray(o['route']) ? routeOf(o['route'] as number[]) : null }));
      return { ...q.counts, outcomes };
    });
  /** Where no circuit ran for a route, the counts asked for are null, and why, where its quantum_result would be. */
  const noCircuitCounts = (a: RouteAnswer): Record<string, unknown> =>
    a.quantum !== undefined ? {} : countsFields(problem.options, () => (a.method === 'trivial'
      ? 'no circuit ran: a route of at most one stop has a single ordering'
      : `no circuit ran: the route has more than ${MAX_ROUTE_WINDOWS * ROUTE_WINDOW} stops, too many for the windowed QAOA pass`));
  /** The quantum run's own result for one route, beside the answer. */
  const quantumResult = (a: RouteAnswer): Record<string, unknown> | undefined => {
    const q = a.quantum;
    if (q === undefined) return undefined;
    if (q.order === undefined) return { method: q.method, route: null, cost: null, feasible: null, optimal_count: 0, note: 'no valid ordering was measured', ...countsOf(q) };
    const e = evaluateRoute(model, q.order);
    return { method: q.method, route: routeOf(q.order), cost: reportedKm(e.distanceKm), feasible: isFeasible(model, e), optimal_count: q.optimalCount, ...countsOf(q) };
  };
  const described = answers.map((a, v) => {
    const e = evaluateRoute(model, a.order);
    if (a.order.length > 0 && e.distanceKm > model.maxDistanceKm + 1e-9) {
      violations.push(`vehicle ${v + 1} route is ${e.distanceKm.toFixed(2)} km, over max_distance_km ${model.maxDistanceKm}`);
    }
    a.order.forEach((s, k) => {
      const w = model.windows[s];
      if (w !== undefined && e.arrivals[k]! > w.end + 1e-9) violations.push(`arrives at ${id(s)} at ${hhmmOf(e.arrivals[k]!)}, after its window ends at ${hhmmOf(w.end)}`);
    });
    const back = e.arrivals[e.arrivals.length - 1]!;
    const depotWindow = model.windows[0];
    if (a.order.length > 0 && depotWindow !== undefined && back > depotWindow.end + 1e-9) {
      violations.push(`vehicle ${v + 1} returns to ${id(0)} at ${hhmmOf(back)}, after its window ends at ${hhmmOf(depotWindow.end)}`);
    }
    const schedule = a.order.map((s, k) => ({ node: id(s), arrival: hhmmOf(e.arrivals[k]!) }));
    return { e, stops: routeOf(a.order), schedule, answer: a };
  });

  const isQuantum = (m: string): boolean => m === 'qaoa' || m === 'qaoa_windows_2opt';
  const used = answers.filter((a) => a.method !== 'trivial');
  const method =
    vehicles === 1 ? answers[0]!.method
    : used.length === 0 ? 'trivial'
    : used.every((a) => a.method === 'qaoa') ? 'qaoa_decomposed'
    : used.some((a) => isQuantum(a.method)) ? 'qaoa_decomposed_hybrid'
    : 'classical_decomposed';
  const totalKm = described.reduce((sum, d) => sum + d.e.distanceKm, 0);
  const solution: Record<string, unknown> = { method };
  if (vehicles === 1) {
    const only = described[0]!;
    Object.assign(solution, { route: only.stops, cost: reportedKm(only.e.distanceKm), unit: 'km', schedule: only.schedule });
    const q = quantumResult(only.answer);
    if (q !== undefined) solution['quantum_result'] = q;
    Object.assign(solution, noCircuitCounts(only.answer));
  } else {
    Object.assign(solution, {
      routes: described.map((d, v) => {
        const q = quantumResult(d.answer);
        return { vehicle: v + 1, stops: d.stops, distance_km: reportedKm(d.e.distanceKm), method: d.answer.method, schedule: d.schedule, ...(q === undefined ? {} : { quantum_result: q }), ...noCircuitCounts(d.answer) };
      }),
      cost: reportedKm(totalKm),
      unit: 'km',
    });
  }
  solution['feasible'] = violations.length === 0;
  if (violations.length > 0) solution['violations'] = violations;
  // What is proven about the optimum: exact per route up to HELD_KARP_MAX_STOPS, a lower bound beyond.
  if (answers.some((a) => a.optimumKm === null)) {
    solution['classical_optimum'] = null;
    solution['proven_optimal'] = false;
    solution['infeasible_reason'] =
      vehicles === 1
        ? 'no ordering of the stops meets max_distance_km and the time windows (proven by Held-Karp over every ordering)'
        : 'for this split of the stops among vehicles, no ordering of some route meets max_distance_km and the time windows (each route checked exhaustively; the split itself is a heuristic sweep, so another split may be feasible)';
  } else if (answers.every((a) => a.optimumKm !== undefined)) {
    const exact = answers.reduce((sum, a) => sum + a.optimumKm!, 0);
    Object.assign(solution, optimumFigures(totalKm, exact));
  } else {
    const bound = answers.reduce((sum, a) => sum + (a.optimumKm ?? a.lowerBoundKm ?? 0), 0);
    // a 1-tree bound that meets a feasible route's length proves it optimal (it happens on small instances)
    Object.assign(solution, lowerBoundFigures(totalKm, bound, violations.length === 0));
  }
  if (vehicles > 1 && (solution['classical_optimum'] !== undefined || solution['lower_bound'] !== undefined)) {
    solution['classical_optimum_scope'] = 'per vehicle, for the given split of stops';
  }
  const quantumParts = answers.flatMap((a) => (a.quantum === undefined ? [] : [a.quantum]));
  const circuitsRun = quantumParts.reduce((sum, q) => sum + q.circuitsRun, 0);
  solution['circuits_run'] = circuitsRun;
  solution['total_shots'] = circuitsRun * ctx.shots;
  solution['optimal_count_total'] = quantumParts.reduce((sum, q) => sum + q.optimalTotal, 0);
  const evidence = quantumParts.flatMap((q) => q.quantum);
  if (evidence.length === 1) solution['quantum'] = evidence[0];
  else if (evidence.length > 1) solution['quantum'] = evidence;
  const circuits = quantumParts.flatMap((q) => (q.circuit === undefined ? [] : [q.circuit]));
  if (circuits.length === 1) solution['circuit'] = circuits[0];
  else if (circuits.length > 1) solution['circuits'] = circuits;
  solution['assumptions'] = { speed_kmh: model.speedKmh, service_minutes: model.serviceMinutes, departure_time: hhmmOf(model.departure), depot: id(0) };
  return {
    solution,
    meta: {
      shots: ctx.shots,
      // shots that measured the returned route: per circuit, so never above shots, and 0 for a
      // route a classical method found (the quantum run's own count is in quantum_result)
      optimal_count: answers.reduce((max, a) => Math.max(max, a.quantum !== undefined && a.method === a.quantum.method ? a.quantum.optimalCount : 0), 0),
      energy: quantumParts.reduce((sum, q) => sum + q.energy, 0),
      depth: quantumParts.reduce((max, q) => Math.max(max, q.depth), 0),
    },
  };
}

/** How one vehicle's route was settled. */
interface RouteAnswer {
  order: number[];
  /** The method that found `order`: trivial, qaoa, qaoa_windows_2opt, held_karp or local_search. */
  method: string;
  quantum?: QuantumRoute;
  /** The proven optimum (km); null when it is proven that no route meets the constraints; undefined when not proven. */
  optimumKm?: number | null;
  /** A lower bound on the route's length (km) where the optimum is not proven. */
  lowerBoundKm?: number;
}

/**
 * One vehicle's route by every method that applies; the best by penalised cost wins, ties
 * going to the quantum result, then Held-Karp, then local search (the first to find it is credited).
 */
function solveOneRoute(model: RouteModel, stops: number[], scale: number, ctx: SolverContext, includeQasm: boolean | undefined, countsTopK: number | undefined): RouteAnswer {
  if (stops.length <= 1) {
    const e = evaluateRoute(model, stops);
    return { order: stops, method: 'trivial', optimumKm: isFeasible(model, e) ? e.distanceKm : null };
  }
  let quantum: QuantumRoute | undefined;
  if (stops.length <= MAX_QAOA_STOPS) {
    const run = qaoaRoute(model, stops, scale, ctx, includeQasm, undefined, countsTopK);
    quantum = { method: 'qaoa', order: run.order, energy: run.energy, depth: run.depth, optimalCount: run.optimalCount, circuit: run.circuit, quantum: [run.quantum], circuitsRun: 1, optimalTotal: run.optimalCount, ...(run.counts === undefined ? {} : { counts: run.counts }) };
  } else {
    quantum = windowedQaoaRoute(model, stops, scale, ctx, includeQasm);
  }
  const local = routeLocalSearch(model, stops, scale);
  const candidates: { method: string; order: number[] }[] = [];
  if (quantum?.order !== undefined) candidates.push({ method: quantum.method, order: quantum.order });
  let optimumKm: number | null | undefined;
  if (stops.length <= HELD_KARP_MAX_STOPS) {
    const timed = hasWindows(model);
    // the shortest route already found bounds the search (with time windows, a feasible one)
    const known = [...candidates.map((c) => c.order), local].map((o) => evaluateRoute(model, o)).filter((e) => !timed || isFeasible(model, e));
    const upper = Math.min(Infinity, ...known.map((e) => e.distanceKm));
    const exact = heldKarpRoute(model, stops, upper);
    if (exact.kind === 'optimal') {
      candidates.push({ method: 'held_karp', order: exact.order });
      optimumKm = exact.distanceKm;
    } else if (exact.kind === 'none_better') optimumKm = upper;
    else if (exact.kind === 'infeasible') optimumKm = null;
    // without time windows the shortest route is proven; if it breaks max_distance_km, every route does
    if (typeof optimumKm === 'number' && optimumKm > model.maxDistanceKm + 1e-9) optimumKm = null;
  }
  candidates.push({ method: 'local_search', order: local });
  let best = candidates[0]!;
  let bestCost = penalisedCost(model, evaluateRoute(model, best.order), scale);
  for (const c of candidates.slice(1)) {
    const cost = penalisedCost(model, evaluateRoute(model, c.order), scale);
    if (cost < bestCost - 1e-9) {
      best = c;
      bestCost = cost;
    }
  }
  const answer: RouteAnswer = { order: best.order, method: best.method, ...(quantum === undefined ? {} : { quantum }), ...(optimumKm === undefined ? {} : { optimumKm }) };
  if (optimumKm === undefined) {
    const km = evaluateRoute(model, best.order).distanceKm;
    answer.lowerBoundKm = Math.min(km, oneTreeBound(model.dist, [0, ...stops], km));
  }
  return answer;
}
