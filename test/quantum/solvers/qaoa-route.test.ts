import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { routeProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { haversineKm, solveRoute } from '../../../src/quantum/solvers/qaoa-route.ts';
import { berlinNodes, routeProblem } from '../fixtures.ts';

const solve = (problem: Record<string, unknown>, seed = 1) => solveRoute(routeProblemSchema.parse(problem), { shots: 1024, rng: seededRng(seed) });

/** Independent brute force: shortest closed tour from nodes[0] through every other node. */
function shortestTour(nodes: { id: string; lat: number; lng: number }[]): number {
  const rest = nodes.slice(1);
  let best = Infinity;
  const permute = (prefix: typeof rest, left: typeof rest): void => {
    if (left.length === 0) {
      let d = 0;
      let at = nodes[0]!;
      for (const n of [...prefix, nodes[0]!]) {
        d += haversineKm(at, n);
        at = n;
      }
      best = Math.min(best, d);
      return;
    }
    left.forEach((n, i) => permute([...prefix, n], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  permute([], rest);
  return best;
}

describe('qaoa / route_optimization', () => {
  it('computes haversine distances (Paris–London ≈ 343.5 km)', () => {
    const d = haversineKm({ lat: 48.8566, lng: 2.3522 }, { lat: 51.5074, lng: -0.1278 });
    assert.ok(Math.abs(d - 343.5) < 1, `got ${d}`);
  });

  for (const stops of [2, 3, 4]) {
    it(`finds the brute-force optimum for one vehicle and ${stops} stops with QAOA (${stops ** 2} qubits)`, () => {
      const { solution, meta } = solve(routeProblem(stops));
      const optimum = shortestTour(berlinNodes.slice(0, stops + 1));
      // The circuit itself must favour the optimum: its exact probability in the final state,
      // not the shots (at 16 qubits p_optimal is ~0.5 %, so a few shots out of 1024 hit it).
      const quantum = solution['quantum'] as { p_optimal: number; p_uniform: number; amplification: number };
      assert.ok(quantum.amplification > 3, `amplification ${quantum.amplification}`);
      // robust for any seed: ≥ 20 valid orderings expected among 1024 shots, so P(no valid shot,
      // i.e. the classical fallback) < e^-20 — the method check below cannot flake
      const pValid = (solution['quantum'] as { p_valid: number }).p_valid;
      assert.ok(pValid * 1024 > 20, `p_valid ${pValid}`);
      assert.equal(quantum.p_uniform, Number((2 / 2 ** (stops * stops)).toPrecision(6)), 'two optimal tours: one and its reverse');
      assert.equal(solution['method'], 'qaoa');
      assert.equal(solution['unit'], 'km');
      const route = solution['route'] as string[];
      assert.equal(route[0], 'depot');
      assert.equal(route[route.length - 1], 'depot');
      assert.deepEqual([...route.slice(1, -1)].sort(), berlinNodes.slice(1, stops + 1).map((n) => n.id).sort());
      assert.ok(Math.abs((solution['cost'] as number) - optimum) < 1e-3, `cost ${String(solution['cost'])} vs optimum ${optimum}`);
      assert.equal(solution['optimality_gap'], 0);
      assert.equal(solution['feasible'], true);
      const circuit = solution['circuit'] as { qubits: number; depth: number; gates: Record<string, number> };
      assert.equal(circuit.qubits, stops * stops);
      assert.equal(meta.depth, circuit.depth);
      assert.ok(meta.depth > 2 && (circuit.gates['rzz'] ?? 0) > 0);
      assert.ok(meta.optimal_count >= 1 && meta.optimal_count <= 1024);
      assert.equal(meta.shots, 1024);
    });
  }

  it('a seeded 16-qubit solve is the same for any simulator thread count', () => {
    const run = (threads: number) => solveRoute(routeProblemSchema.parse(routeProblem(4)), { shots: 1024, rng: seededRng(7), threads });
    const one = run(1);
    const two = run(2);
    assert.deepEqual(two.solution, one.solution);
    assert.deepEqual(two.meta, one.meta);
  });

  it('splits stops among several vehicles and reports routes with distances', () => {
    const { solution } = solve({ ...routeProblem(6), constraints: { max_distance_km: 100, vehicle_count: 2 } });
    const routes = solution['routes'] as { vehicle: number; stops: string[]; distance_km: number }[];
    assert.equal(routes.length, 2);
    const visited = routes.flatMap((r) => r.stops.slice(1, -1)).sort();
    assert.deepEqual(visited, ['a', 'b', 'c', 'd', 'e', 'f']);
    for (const r of routes) {
      let d = 0;
      for (let i = 1; i < r.stops.length; i++) {
        d += haversineKm(berlinNodes.find((n) => n.id === r.stops[i - 1])!, berlinNodes.find((n) => n.id === r.stops[i])!);
      }
      assert.ok(Math.abs(d - r.distance_km) < 1e-2);
    }
    // the split minimises total length within max_distance_km, so shares may be unequal (a long share runs QAOA windows)
    assert.match(solution['method'] as string, /^qaoa_decomposed/);
  });

  it('orders stops to meet time windows, at the stated speed', () => {
    // b is far from the depot in the shortest tour order; a tight window forces it first
    const base = routeProblem(4);
    const free = solve(base).solution['route'] as string[];
    const last = free[free.length - 2]!;
    const windowed = solve({ ...base, constraints: { max_distance_km: 100, vehicle_count: 1, time_windows: [{ node: last, start: '08:00', end: '08:12' }] } });
    const route = windowed.solution['route'] as string[];
    assert.equal(windowed.solution['feasible'], true);
    assert.ok(route.indexOf(last) <= 2, `route ${route.join(',')} should reach ${last} early`);
  });

  it('reports infeasible constraints instead of hiding them', () => {
    const { solution } = solve({ ...routeProblem(3), constraints: { max_distance_km: 1, vehicle_count: 1 } });
    assert.equal(solution['feasible'], false);
    assert.match((solution['violations'] as string[])[0]!, /max_distance_km/);
    assert.equal(solution['classical_optimum'], null);
  });

  it('decomposes a long route into QAOA windows and polishes it with 2-opt', () => {
    const { solution, meta } = solve(routeProblem(6));
    assert.equal(solution['method'], 'qaoa_windows_2opt');
    assert.equal((solution['circuit'] as { qubits: number }).qubits, 9);
    assert.ok(meta.depth > 0);
    assert.ok(Math.abs((solution['cost'] as number) - shortestTour(berlinNodes)) < 1e-3, `cost ${String(solution['cost'])}`);
    assert.equal(solution['optimality_gap'], 0);
  });

  it('refuses a time window on an unknown node with a named field', () => {
    assert.throws(
      () => solve({ ...routeProblem(2), constraints: { max_distance_km: 50, vehicle_count: 1, time_windows: [{ node: 'zz', start: '09:00', end: '10:00' }] } }),
      (e: { status?: number; param?: string }) => e.status === 422 && e.param === 'problem.constraints.time_windows.0.node',
    );
  });
});

describe('qaoa / route_optimization: splitting stops among vehicles', () => {
  it('splits by the distance limit, not into equal counts (one stop south, three north, 2 vehicles)', () => {
    const nodes = [
      { id: 'depot', lat: 50, lng: 10 },
      { id: 's', lat: 49, lng: 10 },
      { id: 'a1', lat: 51, lng: 9.95 },
      { id: 'a2', lat: 51.01, lng: 10 },
      { id: 'a3', lat: 51, lng: 10.05 },
    ];
    const { solution } = solve({ type: 'route_optimization', nodes, constraints: { max_distance_km: 300, vehicle_count: 2 } });
    assert.equal(solution['feasible'], true, JSON.stringify(solution['violations']));
    const routes = solution['routes'] as { stops: string[]; distance_km: number }[];
    const groups = routes.map((r) => r.stops.slice(1, -1).sort().join(',')).sort();
    assert.deepEqual(groups, ['a1,a2,a3', 's']);
    for (const r of routes) assert.ok(r.distance_km <= 300);
  });

  it('words a multi-vehicle infeasibility as about this split, not proven for all', () => {
    const { solution } = solve({ ...routeProblem(4), constraints: { max_distance_km: 1, vehicle_count: 2 } });
    assert.equal(solution['feasible'], false);
    assert.match(solution['infeasible_reason'] as string, /for this split/);
    assert.doesNotMatch(solution['infeasible_reason'] as string, /^no ordering of the stops meets/);
  });
});

describe('qaoa / route_optimization: shot accounting', () => {
  it('meta.optimal_count never exceeds meta.shots; totals over circuits are reported separately', () => {
    for (const problem of [routeProblem(6), { ...routeProblem(8), constraints: { max_distance_km: 100, vehicle_count: 2 } }]) {
      const { solution, meta } = solveRoute(routeProblemSchema.parse(problem), { shots: 8, rng: seededRng(3) });
      assert.ok(meta.optimal_count <= meta.shots, `optimal_count ${meta.optimal_count} > shots ${meta.shots}`);
      const runs = solution['circuits_run'] as number;
      assert.ok(runs >= 2);
      assert.equal(solution['total_shots'], runs * 8);
      assert.ok((solution['optimal_count_total'] as number) <= runs * 8);
    }
  });
});
