/**
 * The route answer's figures against exact optima: a reported lower_bound never above the
 * optimum, a reported gap never below the true gap, and the fields consistent with each other.
 * Optima come from the tests' own ground truth (brute force up to 8 stops, a plain Held-Karp
 * at 16), never from the solver.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { routeProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { haversineKm, solveRoute } from '../../../src/quantum/solvers/qaoa-route.ts';
import { oneTreeBound } from '../../../src/quantum/solvers/one-tree-bound.ts';
import { lowerBoundFigures, optimumFigures, reportedKm } from '../../../src/quantum/solvers/route-optimum-figures.ts';
import { bruteForce, check, randomNodes, shortestTourKm, type Node } from './route-ground-truth.ts';

const STEP = 0.001;
/** Noise of summing the same legs in another order (the solver's sum against the test's). */
const SUM_NOISE = 1e-9;

const solve = (nodes: Node[], vehicles = 1, seed = 1): Record<string, unknown> =>
  solveRoute(routeProblemSchema.parse({ type: 'route_optimization', nodes, constraints: { max_distance_km: 1000, vehicle_count: vehicles } }), { shots: 256, rng: seededRng(seed) }).solution;

const nodesArb = (minStops: number, maxStops: number): fc.Arbitrary<Node[]> =>
  fc
    .array(fc.record({ lat: fc.double({ min: 48.0, max: 48.2, noNaN: true }), lng: fc.double({ min: 11.4, max: 11.7, noNaN: true }) }), { minLength: minStops, maxLength: maxStops })
    .map((stops) => [{ id: 'depot', lat: 48.1, lng: 11.5 }, ...stops.map((s, i) => ({ id: `s${i}`, ...s }))]);

const tourKm = (nodes: Node[], order: readonly number[]): number => {
  let km = 0;
  let at = 0;
  for (const i of [...order, 0]) {
    km += haversineKm(nodes[at]!, nodes[i]!);
    at = i;
  }
  return km;
};

/** Checks one answer's figures against the exact optimum `optimum` (km) of the same routes. */
function checkAgainstOptimum(solution: Record<string, unknown>, lengthKm: number, optimum: number): void {
  const cost = solution['cost'] as number;
  assert.equal(cost, reportedKm(lengthKm), 'cost is the route length to the nearest metre');
  const trueGap = (lengthKm - optimum) / optimum;
  if (solution['lower_bound'] !== undefined) {
    const bound = solution['lower_bound'] as number;
    const gap = solution['gap_to_lower_bound'] as number;
    assert.ok(bound <= optimum, `lower_bound ${bound} above the optimum ${optimum}`);
    assert.ok(bound <= cost, `lower_bound ${bound} above cost ${cost}`);
    assert.ok(optimum - bound < STEP + 1e-6 * optimum || solution['proven_optimal'] === false, 'a bound that proves optimality is within a step of it');
    assert.ok(gap >= trueGap - SUM_NOISE, `gap ${gap} below the true gap ${trueGap}`);
    // the route is within the reported gap of the reported bound (up to one rounding step of each)
    assert.ok(cost <= (bound + STEP) * (1 + gap) + STEP / 2, `cost ${cost} outside gap ${gap} of ${bound}`);
    assert.equal(solution['proven_optimal'] === true, gap === 0 && solution['feasible'] === true, 'a gap of 0 proves a feasible route optimal, and only then');
    if (solution['proven_optimal'] === true) assert.ok(lengthKm <= optimum + SUM_NOISE, 'proven optimal and it is');
  } else {
    const exact = solution['classical_optimum'] as number;
    const gap = solution['optimality_gap'] as number;
    assert.equal(exact, reportedKm(optimum), 'classical_optimum is the optimum to the nearest metre');
    assert.ok(exact <= cost);
    assert.ok(gap >= trueGap - SUM_NOISE, `optimality_gap ${gap} below the true gap ${trueGap}`);
    assert.ok(gap < trueGap + STEP, 'and not a step more than it');
    assert.equal(solution['proven_optimal'], gap === 0);
    assert.equal(solution['proven_optimal'], lengthKm <= optimum + SUM_NOISE);
  }
}

describe('route answer figures: safe rounding against exact optima', () => {
  it('property (≤ 8 stops): the 1-tree bound, rounded, stays ≤ the brute-force optimum; the gap to it, rounded, ≥ the true gap', () => {
    fc.assert(
      fc.property(nodesArb(2, 8), fc.nat(), (nodes, pick) => {
        const optimum = bruteForce(nodes).km;
        const all = nodes.map((_, i) => i);
        const dist = nodes.map((a) => nodes.map((b) => haversineKm(a, b)));
        // any tour: the identity order rotated by `pick`
        const stops = all.slice(1);
        const order = [...stops.slice(pick % stops.length), ...stops.slice(0, pick % stops.length)];
        const length = tourKm(nodes, order);
        const bound = Math.min(length, oneTreeBound(dist, all, length));
        assert.ok(bound <= optimum, 'the bound itself is a bound');
        const f = lowerBoundFigures(length, bound, true);
        assert.ok(f.lower_bound <= optimum, `lower_bound ${f.lower_bound} above the optimum ${optimum}`);
        assert.ok(f.lower_bound <= reportedKm(length));
        assert.ok(bound - f.lower_bound < STEP);
        assert.ok(f.gap_to_lower_bound >= (length - optimum) / optimum - SUM_NOISE);
        if (f.gap_to_lower_bound > 0) assert.ok(f.gap_to_lower_bound >= (length - bound) / bound);
        else assert.ok(f.proven_optimal && length <= optimum * (1 + 1e-7));
        const g = optimumFigures(length, optimum);
        assert.ok(g.classical_optimum <= reportedKm(length));
        assert.ok(g.optimality_gap >= (length - optimum) / optimum - SUM_NOISE);
        assert.equal(g.proven_optimal, g.optimality_gap === 0);
      }),
      { numRuns: 200 },
    );
  });

  it('the case itself: tight 1-tree bounds are common, and to the nearest metre they round above the optimum', () => {
    let tight = 0;
    let nearestAbove = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const nodes = randomNodes(8, seed);
      const optimum = bruteForce(nodes).km;
      const all = nodes.map((_, i) => i);
      const bound = oneTreeBound(nodes.map((a) => nodes.map((b) => haversineKm(a, b))), all, optimum);
      if (optimum - bound <= 1e-7 * optimum) tight++;
      if (Math.round(bound * 1000) / 1000 > optimum) nearestAbove++;
      assert.ok(lowerBoundFigures(optimum, bound, true).lower_bound <= optimum);
    }
    assert.ok(tight >= 10, `${tight} tight bounds`);
    assert.ok(nearestAbove >= 3, `rounding to nearest put ${nearestAbove} bounds above the optimum`);
  });

  it('property (≤ 8 stops, whole solver): cost, classical_optimum and optimality_gap against brute force', () => {
    fc.assert(
      fc.property(nodesArb(1, 8), fc.integer({ min: 1, max: 1000 }), (nodes, seed) => {
        const solution = solve(nodes, 1, seed);
        const route = (solution['route'] as string[]).slice(1, -1);
        checkAgainstOptimum(solution, check(nodes, route).km, bruteForce(nodes).km);
      }),
      { numRuns: 12 },
    );
  });

  it('16 stops, whole solver: lower_bound never above the Held-Karp optimum, the gap never below the true one', () => {
    // seeds 2, 3, 4 and 7 have tight bounds that rounding to the nearest metre put above the optimum
    const seeds = [2, 3, 4, 7, ...fc.sample(fc.integer({ min: 100, max: 100_000 }), 2)];
    for (const seed of seeds) {
      const nodes = randomNodes(16, seed);
      const solution = solve(nodes, 1, seed);
      assert.notEqual(solution['lower_bound'], undefined, 'beyond Held-Karp the answer carries a lower bound');
      const route = (solution['route'] as string[]).slice(1, -1);
      checkAgainstOptimum(solution, check(nodes, route).km, shortestTourKm(nodes));
    }
  });

  it('two vehicles with 16 stops each: the summed bound stays below the summed per-route optima', () => {
    // seed 6: the sweep splits the 32 stops 16 + 16, both beyond Held-Karp in the solver
    const nodes = randomNodes(32, 6);
    const solution = solve(nodes, 2, 6);
    const routes = solution['routes'] as { stops: string[]; distance_km: number }[];
    assert.deepEqual(routes.map((r) => r.stops.length - 2), [16, 16]);
    let optimum = 0;
    let length = 0;
    for (const r of routes) {
      const own = [nodes[0]!, ...r.stops.slice(1, -1).map((id) => nodes.find((n) => n.id === id)!)];
      const km = check(own, r.stops.slice(1, -1)).km;
      assert.equal(r.distance_km, reportedKm(km));
      length += km;
      optimum += shortestTourKm(own);
    }
    assert.equal(solution['classical_optimum_scope'], 'per vehicle, for the given split of stops');
    checkAgainstOptimum(solution, length, optimum);
  });
});
