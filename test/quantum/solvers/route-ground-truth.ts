/**
 * Ground truth for the route tests, written independently of src/quantum/solvers: seeded
 * instances, a schedule check, brute force over permutations and a plain Held-Karp.
 * Distances come from haversineKm (the one shared piece: the metric itself).
 */
import { haversineKm } from '../../../src/quantum/solvers/qaoa-route.ts';

export interface Node {
  id: string;
  lat: number;
  lng: number;
}

export interface Window {
  node: string;
  start: string;
  end: string;
}

/** A tiny LCG: the instances must not depend on the solver's own random streams. */
export function lcg(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

/** A depot and `stops` stops scattered over about 20 km × 20 km. */
export function randomNodes(stops: number, seed: number): Node[] {
  const r = lcg(seed);
  return [{ id: 'depot', lat: 48.1, lng: 11.5 }, ...Array.from({ length: stops }, (_, i) => ({ id: `s${i}`, lat: 48.0 + 0.2 * r(), lng: 11.4 + 0.3 * r() }))];
}

const hhmm = (minutes: number): string => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(Math.floor(minutes % 60)).padStart(2, '0')}`;
const minutes = (text: string): number => Number(text.slice(0, 2)) * 60 + Number(text.slice(3, 5));

export interface Schedule {
  speedKmh: number;
  serviceMinutes: number;
  departure: number;
}
export const DEFAULT_SCHEDULE: Schedule = { speedKmh: 40, serviceMinutes: 5, departure: 8 * 60 };

/**
 * Windows that one random visiting order meets with a little slack, on about half the stops,
 * so the instance is feasible but the shortest tour usually is not.
 */
export function randomWindows(nodes: Node[], seed: number, schedule = DEFAULT_SCHEDULE): Window[] {
  const r = lcg(seed + 1000);
  const order = nodes.slice(1).map((n) => n.id);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const windows: Window[] = [];
  let t = schedule.departure;
  let at = nodes[0]!;
  for (const id of order) {
    const n = byId.get(id)!;
    t += (haversineKm(at, n) / schedule.speedKmh) * 60;
    if (r() < 0.6) windows.push({ node: id, start: hhmm(Math.max(0, t - 10)), end: hhmm(Math.ceil(t) + 4) });
    t += schedule.serviceMinutes;
    at = n;
  }
  return windows;
}

/** Length of depot → ids → depot, and whether it meets every window (waiting allowed) and maxKm. */
export function check(nodes: Node[], ids: readonly string[], windows: readonly Window[] = [], maxKm = Infinity, schedule = DEFAULT_SCHEDULE): { km: number; feasible: boolean } {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const win = new Map(windows.map((w) => [w.node, { start: minutes(w.start), end: minutes(w.end) }]));
  let km = 0;
  let t = schedule.departure;
  let ok = true;
  let at = nodes[0]!;
  for (const id of [...ids, nodes[0]!.id]) {
    const n = byId.get(id)!;
    const leg = haversineKm(at, n);
    km += leg;
    t += (leg / schedule.speedKmh) * 60;
    const w = win.get(id);
    if (w !== undefined) {
      if (id !== nodes[0]!.id) t = Math.max(t, w.start);
      if (t > w.end + 1e-6) ok = false;
    }
    t += id === nodes[0]!.id ? 0 : schedule.serviceMinutes;
    at = n;
  }
  return { km, feasible: ok && km <= maxKm + 1e-9 };
}

/** The shortest feasible tour by trying every order (Heap's algorithm); Infinity when none is feasible. */
export function bruteForce(nodes: Node[], windows: readonly Window[] = [], maxKm = Infinity, schedule = DEFAULT_SCHEDULE): { km: number; order: string[] } {
  const ids = nodes.slice(1).map((n) => n.id);
  let best = { km: Infinity, order: [] as string[] };
  const visit = (): void => {
    const { km, feasible } = check(nodes, ids, windows, maxKm, schedule);
    if (feasible && km < best.km) best = { km, order: [...ids] };
  };
  const c = new Array<number>(ids.length).fill(0);
  visit();
  for (let i = 0; i < ids.length; ) {
    if (c[i]! < i) {
      const j = i % 2 === 0 ? 0 : c[i]!;
      [ids[j], ids[i]] = [ids[i]!, ids[j]!];
      visit();
      c[i]!++;
      i = 0;
    } else {
      c[i] = 0;
      i++;
    }
  }
  return best;
}

/** Shortest tour without windows by a plain Held-Karp over arrays of arrays (no pruning). */
export function shortestTourKm(nodes: Node[]): number {
  const n = nodes.length - 1;
  const d = (a: number, b: number): number => haversineKm(nodes[a]!, nodes[b]!);
  const size = 1 << n;
  const table: number[][] = Array.from({ length: size }, () => new Array<number>(n).fill(Infinity));
  for (let k = 0; k < n; k++) table[1 << k]![k] = d(0, k + 1);
  for (let mask = 1; mask < size; mask++) {
    for (let j = 0; j < n; j++) {
      const c = table[mask]![j]!;
      if (!Number.isFinite(c)) continue;
      for (let k = 0; k < n; k++) {
        if (mask & (1 << k)) continue;
        const next = mask | (1 << k);
        table[next]![k] = Math.min(table[next]![k]!, c + d(j + 1, k + 1));
      }
    }
  }
  return Math.min(...table[size - 1]!.map((c, j) => c + d(j + 1, 0)));
}
