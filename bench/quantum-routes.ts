/**
 * The classical route methods behind qaoa / route_optimization, alone (no QAOA, no HTTP):
 * Held-Karp time from 10 to 15 stops with and without time windows (the exact range), and
 * local search time, the 1-tree lower bound and the gap between them from 20 to 500 stops.
 * Random stops over ~20 km × 30 km, windows that one random order meets on ~60% of the stops.
 * Medians over RUNS runs. Usage: npm run bench:routes [-- --runs 3]
 */
import { cpus } from 'node:os';
import { HELD_KARP_MAX_STOPS, heldKarpRoute } from '../src/quantum/solvers/held-karp-route.ts';
import { oneTreeBound } from '../src/quantum/solvers/one-tree-bound.ts';
import { haversineKm } from '../src/quantum/solvers/qaoa-route.ts';
import { routeLocalSearch } from '../src/quantum/solvers/route-local-search.ts';
import { evaluateRoute, type RouteModel } from '../src/quantum/solvers/route-model.ts';
import { lcg } from './seeded-lcg.ts';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;


function instance(stops: number, seed: number, timed: boolean): RouteModel {
  const r = lcg(seed);
  const nodes = [{ lat: 48.1, lng: 11.5 }, ...Array.from({ length: stops }, () => ({ lat: 48 + 0.2 * r(), lng: 11.4 + 0.3 * r() }))];
  const dist = nodes.map((a) => nodes.map((b) => haversineKm(a, b)));
  const windows: RouteModel['windows'] = new Array(nodes.length).fill(undefined);
  if (timed) {
    const order = Array.from({ length: stops }, (_, i) => i + 1).sort(() => r() - 0.5);
    let t = 480;
    let at = 0;
    for (const s of order) {
      t += (dist[at]![s]! / 40) * 60;
      if (r() < 0.6) windows[s] = { start: Math.max(0, t - 10), end: Math.ceil(t) + 4 };
      t += 5;
      at = s;
    }
  }
  return { dist, windows, speedKmh: 40, serviceMinutes: 5, departure: 480, maxDistanceKm: 1e6 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const stopsOf = (m: RouteModel): number[] => m.dist.slice(1).map((_, i) => i + 1);

console.log(`node ${process.version}, ${cpus()[0]?.model ?? 'unknown cpu'} × ${cpus().length}, median of ${RUNS}`);
console.log('\nHeld-Karp (exact; no upper bound given, so nothing is pruned by one)');
console.log('| stops | no windows ms | with windows ms |');
console.log('|---|---|---|');
for (let stops = 10; stops <= HELD_KARP_MAX_STOPS; stops++) {
  const cells = [false, true].map((timed) => {
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const model = instance(stops, 100 + run, timed);
      const t = performance.now();
      heldKarpRoute(model, stopsOf(model));
      times.push(performance.now() - t);
    }
    return median(times).toFixed(0);
  });
  console.log(`| ${stops} | ${cells[0]} | ${cells[1]} |`);
}
console.log('\nLocal search (2-opt + Or-opt + relocate + kicks) and the 1-tree lower bound, no windows');
console.log('| stops | local search ms | bound ms | gap to bound (median) |');
console.log('|---|---|---|---|');
for (const stops of [20, 50, 100, 200, 500]) {
  const ls: number[] = [];
  const lb: number[] = [];
  const gaps: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const model = instance(stops, 200 + run, false);
    let t = performance.now();
    const order = routeLocalSearch(model, stopsOf(model), 1e9);
    ls.push(performance.now() - t);
    const km = evaluateRoute(model, order).distanceKm;
    t = performance.now();
    const bound = oneTreeBound(model.dist, [0, ...stopsOf(model)], km);
    lb.push(performance.now() - t);
    gaps.push((km - bound) / bound);
  }
  console.log(`| ${stops} | ${median(ls).toFixed(0)} | ${median(lb).toFixed(0)} | ${(100 * median(gaps)).toFixed(2)} % |`);
}
