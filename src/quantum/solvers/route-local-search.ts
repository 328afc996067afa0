import { seededRng } from '../simulator/rng.ts';
import { arrivalAt, hasWindows, minutesLate, penalised, type RouteModel } from './route-model.ts';

/** Nearest other nodes (depot included) each stop's moves are tried against. */
const NEIGHBOURS = 10;
/** Longest segment Or-opt moves (1 = relocate one stop). */
const MAX_SEGMENT = 3;
/**
 * Work limit, in route nodes walked while scoring candidates with time windows (each candidate
 * is re-timed), and in candidates scored without them (each O(1)); keeps 500 stops in seconds.
 */
const WINDOW_BUDGET = 4e7;
const PLAIN_BUDGET = 2e7;

/** Stops in visiting order from the depot, nearest unvisited first. */
export function nearestNeighbourOrder(model: RouteModel, stops: readonly number[]): number[] {
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
  return order;
}

/**
 * Clarke–Wright savings for one vehicle: start with a depot round trip per stop and join route
 * ends in order of the saving d(0,i) + d(0,j) − d(i,j), largest first, until one route is left.
 */
export function savingsOrder(model: RouteModel, stops: readonly number[]): number[] {
  const m = stops.length;
  if (m <= 2) return [...stops];
  const d = model.dist;
  const pairs: { a: number; b: number; saving: number }[] = [];
  for (let a = 0; a < m; a++) for (let b = a + 1; b < m; b++) pairs.push({ a, b, saving: d[0]![stops[a]!]! + d[0]![stops[b]!]! - d[stops[a]!]![stops[b]!]! });
  pairs.sort((x, y) => y.saving - x.saving || x.a - y.a || x.b - y.b);
  // each stop's neighbours on its path (-1: none, i.e. the depot), and the path's other end
  const left = new Int32Array(m).fill(-1);
  const right = new Int32Array(m).fill(-1);
  const otherEnd = Int32Array.from({ length: m }, (_, i) => i);
  const isEnd = (i: number): boolean => left[i] === -1 || right[i] === -1;
  let joins = 0;
  for (const { a, b } of pairs) {
    if (joins === m - 1) break;
    if (!isEnd(a) || !isEnd(b) || otherEnd[a] === b) continue;
    const ea = otherEnd[a]!;
    const eb = otherEnd[b]!;
    if (right[a] === -1) right[a] = b;
    else left[a] = b;
    if (left[b] === -1) left[b] = a;
    else right[b] = a;
    otherEnd[ea] = eb;
    otherEnd[eb] = ea;
    joins++;
  }
  // walk the single path from one end
  let at = 0;
  while (left[at] !== -1 && right[at] !== -1) at++;
  const order: number[] = [];
  for (let prev = -1; at !== -1; ) {
    order.push(stops[at]!);
    const step = left[at] !== prev && left[at] !== -1 ? left[at]! : right[at] !== prev ? right[at]! : -1;
    prev = at;
    at = step;
  }
  return order;
}

/** Stops in order of their window's end (stops without one last, nearest first among ties). */
function deadlineOrder(model: RouteModel, stops: readonly number[]): number[] {
  const end = (s: number): number => model.windows[s]?.end ?? Infinity;
  return [...stops].sort((a, b) => end(a) - end(b) || model.dist[0]![a]! - model.dist[0]![b]! || a - b);
}

/**
 * A slice of the tour array, walked forwards or backwards: candidate routes are a few slices
 * of the current one, scored without building them.
 */
type Piece = [from: number, to: number];
const TWO_OPT = 0;
const OR_OPT = 1;

/**
 * Local search for one vehicle's route: 2-opt, Or-opt (segments of 2–3 stops, either way
 * round) and relocate (Or-opt of one stop), each tried only against a stop's NEIGHBOURS nearest
 * nodes, with don't-look bits (a stop is re-examined only when an edge at it changed). Then an
 * iterated local search: double-bridge kicks (a move 2-opt and Or-opt cannot undo), kept when
 * the route gets shorter. Starts from nearest neighbour and Clarke–Wright savings (and, with
 * time windows, window-end order); the best result wins.
 *
 * Without time windows a move is scored in O(1) from the edges it changes (the penalty for
 * max_distance_km only grows with length). With time windows every candidate is re-timed on
 * the whole route (stopping as soon as it is no better), within WINDOW_BUDGET. Deterministic:
 * kicks use a fixed seed, so the same instance gives the same route.
 */
export function routeLocalSearch(model: RouteModel, stops: readonly number[], scale: number): number[] {
  const m = stops.length;
  if (m <= 2) return [...stops];
  const timed = hasWindows(model);
  const d = model.dist;
  const starts = [nearestNeighbourOrder(model, stops), savingsOrder(model, stops)];
  if (timed) starts.push(deadlineOrder(model, stops));
  // neighbour lists over the stops and the depot
  const candidates = [0, ...stops];
  const neighbours = new Map<number, number[]>();
  for (const s of stops) {
    neighbours.set(
      s,
      candidates
        .filter((c) => c !== s)
        .sort((a, b) => d[s]![a]! - d[s]![b]! || a - b)
        .slice(0, NEIGHBOURS),
    );
  }
  let budget = timed ? WINDOW_BUDGET : PLAIN_BUDGET;

  /** Penalised cost of the route made of these slices of `tour`, or Infinity once it reaches `stopAt`. */
  const scorePieces = (tour: Int32Array, pieces: readonly Piece[], stopAt: number): number => {
    let km = 0;
    let late = 0;
    let leave = model.departure;
    let at = 0;
    for (const [from, to] of pieces) {
      const step = to >= from ? 1 : -1;
      for (let x = from; ; x += step) {
        const s = tour[x]!;
        if (x !== 0) {
          // the schedule rule of evaluateRoute, step by step, so the walk can stop early
          const leg = d[at]![s]!;
          km += leg;
          const t = arrivalAt(model, leave, leg, s);
          late += minutesLate(model, s, t);
          leave = s !== 0 ? t + model.serviceMinutes : t;
          budget--;
          // length and lateness only grow along the route: the cost so far bounds the total
          if (penalised(model, km, late, scale) >= stopAt) return Infinity;
        }
        at = s;
        if (x === to) break;
      }
    }
    return penalised(model, km, late, scale);
  };
  const length = (tour: Int32Array): number => {
    let km = 0;
    for (let x = 0; x + 1 < tour.length; x++) km += d[tour[x]!]![tour[x + 1]!]!;
    return km;
  };
  const routeCost = (tour: Int32Array): number => (timed ? scorePieces(tour, [[0, tour.length - 1]], Infinity) : length(tour));

  /** The route that 2-opt (i, j) or Or-opt (s, e, p, reversed) makes of `tour`, as slices of it. */
  const piecesOf = (tour: Int32Array, kind: number, u: number, v: number, p: number, reversed: boolean): Piece[] => {
    const last = tour.length - 1;
    if (kind === TWO_OPT) return [[0, u], [v, u + 1], [v + 1, last]];
    const segment: Piece = reversed ? [v, u] : [u, v];
    return p < u ? [[0, p], segment, [p + 1, u - 1], [v + 1, last]] : [[0, u - 1], [v + 1, p], segment, [p + 1, last]];
  };
  /** Applies the move to `tour`; returns the nodes at the edges it changed. */
  const applyMove = (tour: Int32Array, kind: number, u: number, v: number, p: number, reversed: boolean): number[] => {
    if (kind === TWO_OPT) {
      const touched = [tour[u]!, tour[u + 1]!, tour[v]!, tour[v + 1]!];
      tour.subarray(u + 1, v + 1).reverse();
      return touched;
    }
    const touched = [tour[u - 1]!, tour[u]!, tour[v]!, tour[v + 1]!, tour[p]!, tour[p + 1]!];
    const moved = Array.from(tour.subarray(u, v + 1));
    if (reversed) moved.reverse();
    const rest = [...tour.subarray(0, u), ...tour.subarray(v + 1)];
    const at = p < u ? p + 1 : p + 1 - moved.length;
    tour.set([...rest.slice(0, at), ...moved, ...rest.slice(at)]);
    return touched;
  };

  /** Improves `tour` ([0, …stops, 0]) in place from the stops in `queue`; returns its cost. */
  const improve = (tour: Int32Array, queue: number[], cost: number): number => {
    const last = m + 1;
    const pos = new Int32Array(d.length);
    const reindex = (): void => {
      for (let x = 1; x <= m; x++) pos[tour[x]!] = x;
    };
    reindex();
    const queued = new Uint8Array(d.length);
    for (const s of queue) queued[s] = 1;
    const dt = (x: number, y: number): number => d[tour[x]!]![tour[y]!]!;
    while (queue.length > 0 && budget > 0) {
      const a = queue.shift()!;
      queued[a] = 0;
      const x = pos[a]!;
      // the best improving move at a, as numbers (no closure per candidate)
      let bestGain = 1e-9;
      let bestCost = cost;
      let found = false;
      let bestKind = 0;
      let bestU = 0;
      let bestV = 0;
      let bestP = 0;
      let bestReversed = false;
      const consider = (delta: number, kind: number, u: number, v: number, p: number, reversed: boolean): void => {
        if (timed) {
          const c = scorePieces(tour, piecesOf(tour, kind, u, v, p, reversed), bestCost - 1e-9);
          if (!(c < bestCost - 1e-9)) return;
          bestCost = c;
        } else {
          budget--;
          if (!(-delta > bestGain)) return;
          bestGain = -delta;
        }
        found = true;
        bestKind = kind;
        bestU = u;
        bestV = v;
        bestP = p;
        bestReversed = reversed;
      };
      for (const c of neighbours.get(a)!) {
        for (let side = 0; side < (c === 0 ? 2 : 1); side++) {
          const y = c === 0 ? (side === 0 ? 0 : last) : pos[c]!;
          const lo = Math.min(x, y);
          const hi = Math.max(x, y);
          // 2-opt: reverse tour[i+1..j], creating edges (tour[i], tour[j]) and (tour[i+1], tour[j+1]); one of them is (a, c)
          for (let shift = 0; shift <= 1; shift++) {
            const i = lo - shift;
            const j = hi - shift;
            if (i < 0 || j > m || j - i < 2) continue;
            consider(dt(i, j) + dt(i + 1, j + 1) - dt(i, i + 1) - dt(j, j + 1), TWO_OPT, i, j, 0, false);
          }
          // Or-opt / relocate: a segment tour[s..e] with a at one end moves into the gap after tour[p], next to c, either way round
          for (let len = 1; len <= MAX_SEGMENT; len++) {
            for (let end = 0; end < (len === 1 ? 1 : 2); end++) {
              const s = end === 0 ? x : x - len + 1;
              const e = s + len - 1;
              if (s < 1 || e > m) continue;
              for (let p = y - 1; p <= y; p++) {
                if (p < 0 || p > m || (p >= s - 1 && p <= e)) continue;
                const removed = dt(s - 1, s) + dt(e, e + 1) + dt(p, p + 1) - dt(s - 1, e + 1);
                consider(dt(p, s) + dt(e, p + 1) - removed, OR_OPT, s, e, p, false);
                if (len > 1) consider(dt(p, e) + dt(s, p + 1) - removed, OR_OPT, s, e, p, true);
              }
            }
          }
        }
      }
      if (!found) continue;
      const touched = applyMove(tour, bestKind, bestU, bestV, bestP, bestReversed);
      cost = timed ? bestCost : cost - bestGain;
      reindex();
      for (const s of [a, ...touched]) {
        if (s !== 0 && queued[s] === 0) {
          queued[s] = 1;
          queue.push(s);
        }
      }
    }
    // the O(1) updates drift by rounding: report the route's own length
    return routeCost(tour);
  };

  let best: Int32Array | undefined;
  let bestCost = Infinity;
  for (const start of starts) {
    const tour = Int32Array.from([0, ...start, 0]);
    const cost = improve(tour, [...start], routeCost(tour));
    if (cost < bestCost - 1e-9) {
      best = tour;
      bestCost = cost;
    }
  }
  // iterated local search: double-bridge kicks A B C D → A C B D on the best route
  const rng = seededRng(`route-local-search:${m}`);
  const kicks = m < 8 ? 0 : 50 + 4 * m;
  for (let k = 0; k < kicks && budget > 0; k++) {
    const cuts = [1 + Math.floor(rng.next() * m), 1 + Math.floor(rng.next() * m), 1 + Math.floor(rng.next() * m)].sort((p, q) => p - q);
    const [i, j, l] = cuts as [number, number, number];
    if (i === j || j === l) continue;
    const current = best!;
    const kicked = Int32Array.from([...current.subarray(0, i), ...current.subarray(j, l), ...current.subarray(i, j), ...current.subarray(l)]);
    const ends = [current[i - 1]!, current[i]!, current[j - 1]!, current[j]!, current[l - 1]!, current[l]!].filter((s) => s !== 0);
    const cost = improve(kicked, [...new Set(ends)], routeCost(kicked));
    if (cost < bestCost - 1e-9) {
      best = kicked;
      bestCost = cost;
    }
  }
  return Array.from(best!.subarray(1, m + 1));
}
