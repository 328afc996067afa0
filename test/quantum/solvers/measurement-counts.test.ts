import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { classificationProblemSchema, clusteringProblemSchema, patternSearchProblemSchema, portfolioProblemSchema, qrngProblemSchema, routeProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { solveQrng } from '../../../src/quantum/solvers/grover-qrng.ts';
import { solvePatternSearch } from '../../../src/quantum/solvers/grover-search.ts';
import { COUNTS_TOP_K_DEFAULT, measurementCounts, type MeasurementCounts } from '../../../src/quantum/solvers/measurement-counts.ts';
import { solveRoute } from '../../../src/quantum/solvers/qaoa-route.ts';
import { solveClustering } from '../../../src/quantum/solvers/qkmeans-clustering.ts';
import { solveClassification } from '../../../src/quantum/solvers/qsvm-classification.ts';
import { solvePortfolio } from '../../../src/quantum/solvers/qubo-portfolio.ts';
import { berlinNodes, blobs, patternProblem, portfolioProblem, routeProblem } from '../fixtures.ts';

const ctx = (seed = 3) => ({ shots: 1024, rng: seededRng(seed) });

/** Every invariant of a histogram that must hold whatever the solver. */
function checkHistogram(h: MeasurementCounts, shots: number, qubits: number, topK: number): void {
  assert.equal(h.shots, shots);
  assert.equal(h.qubits, qubits);
  assert.ok(h.outcomes.length <= topK && h.outcomes.length <= h.distinct_outcomes);
  const listed = h.outcomes.reduce((s, o) => s + o.count, 0);
  assert.equal(listed + h.other_count, shots, 'listed + other = every shot');
  for (const [i, o] of h.outcomes.entries()) {
    assert.equal(o.bitstring.length, qubits);
    assert.equal(parseInt(o.bitstring, 2), o.index, 'the bitstring is the index in binary, qubit 0 last');
    if (i > 0) {
      const prev = h.outcomes[i - 1]!;
      assert.ok(prev.count > o.count || (prev.count === o.count && prev.index < o.index), 'by count, then index');
    }
  }
}

describe('measurement counts (problem.options.include_counts)', () => {
  it('lists the top k of a count map, counts the rest and the optimal shots', () => {
    const counts = new Map([[0b101, 5], [0b000, 40], [0b111, 40], [0b010, 15]]);
    const h = measurementCounts(counts, 3, 2, new Set([0b101, 0b010]));
    assert.deepEqual(h.outcomes.map((o) => [o.bitstring, o.count, o.optimal]), [['000', 40, false], ['111', 40, false]]);
    assert.equal(h.other_count, 20);
    assert.equal(h.optimal_count, 20, 'optimal shots are counted also when not listed');
    assert.equal(h.distinct_outcomes, 4);
    checkHistogram(h, 100, 3, 2);
  });

  it('grover: absent unless asked; asked, the matching record is marked and its count is meta.optimal_count', () => {
    const plain = solvePatternSearch(patternSearchProblemSchema.parse(patternProblem(64, 37)), ctx());
    assert.equal(plain.solution['measurement_counts'], undefined);
    const { solution, meta } = solvePatternSearch(patternSearchProblemSchema.parse({ ...patternProblem(64, 37), options: { include_counts: true, counts_top_k: 5 } }), ctx());
    const h = solution['measurement_counts'] as MeasurementCounts;
    checkHistogram(h, 1024, 6, 5);
    const top = h.outcomes[0]!;
    assert.equal(top.index, 37);
    assert.equal(top.optimal, true);
    assert.equal(top.count, meta.optimal_count);
    assert.equal(top['record'], 'order-37 status=FRAUD');
    assert.equal(h.optimal_count, Math.round((solution['confidence'] as number) * 1024));
    assert.ok(h.outcomes.slice(1).every((o) => !o.optimal));
  });

  it('grover: the same seed gives the same answer with or without counts', () => {
    const a = solvePatternSearch(patternSearchProblemSchema.parse(patternProblem(16, 3)), ctx(9));
    const b = solvePatternSearch(patternSearchProblemSchema.parse({ ...patternProblem(16, 3), options: { include_counts: true } }), ctx(9));
    const { measurement_counts: counts, ...rest } = b.solution;
    assert.deepEqual(rest, a.solution);
    assert.deepEqual(b.meta, a.meta);
    assert.ok((counts as MeasurementCounts).outcomes.length <= COUNTS_TOP_K_DEFAULT);
  });

  it('qubo: outcomes carry their selection; the enumerated optimum is marked', () => {
    const { solution } = solvePortfolio(portfolioProblemSchema.parse({ ...portfolioProblem(), options: { include_counts: true, counts_top_k: 64 } }), ctx());
    const h = solution['measurement_counts'] as MeasurementCounts;
    checkHistogram(h, 1024, 6, 64);
    const optimum = (solution['classical_optimum'] as { selected: string[] }).selected;
    for (const o of h.outcomes) {
      const selected = o['selected'] as string[];
      assert.deepEqual(selected, ['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF'].filter((_, i) => (o.index >> i) & 1));
      assert.equal(o.optimal, [...selected].sort().join() === [...optimum].sort().join(), `outcome ${o.bitstring}`);
    }
    assert.ok(h.outcomes.some((o) => o.optimal), 'QAOA measured the optimum among its top outcomes');
  });

  it('qaoa route: one circuit, outcomes read as routes; the optimal orderings are marked', () => {
    const { solution } = solveRoute(routeProblemSchema.parse(routeProblem(3, { options: { include_counts: true } })), ctx());
    const q = solution['quantum_result'] as { measurement_counts: MeasurementCounts };
    const h = q.measurement_counts;
    checkHistogram(h, 1024, 9, COUNTS_TOP_K_DEFAULT);
    for (const o of h.outcomes) {
      const route = o['route'] as string[] | null;
      if (o.optimal) assert.ok(route !== null, 'an optimal outcome is a valid ordering');
      if (route !== null) assert.deepEqual([route[0], route.at(-1), route.length], ['depot', 'depot', 5]);
    }
    // The optimal orderings are the two directions of the shortest tour.
    const optimalRoutes = h.outcomes.filter((o) => o.optimal).map((o) => (o['route'] as string[]).join());
    const best = (solution['route'] as string[]).join();
    assert.ok(optimalRoutes.length > 0, 'QAOA measured an optimal ordering among its top outcomes');
    assert.ok(optimalRoutes.every((r) => r === best || r === [...(solution['route'] as string[])].reverse().join()));
  });

  it('qaoa route with several vehicles: each route\'s quantum_result has its own circuit\'s histogram', () => {
    // Three vehicles over six stops: the sweep gives two routes a QAOA circuit each and one a single stop.
    const problem = { type: 'route_optimization', nodes: berlinNodes, constraints: { max_distance_km: 100, vehicle_count: 3 }, options: { include_counts: true, counts_top_k: 8 } };
    const { solution } = solveRoute(routeProblemSchema.parse(problem), ctx());
    const routes = solution['routes'] as { stops: string[]; quantum_result?: { measurement_counts: MeasurementCounts }; measurement_counts?: null }[];
    const sampled = routes.filter((r) => r.quantum_result !== undefined);
    assert.equal(sampled.length, 2);
    for (const r of sampled) {
      const stops = r.stops.length - 2;
      const h = r.quantum_result!.measurement_counts;
      checkHistogram(h, 1024, stops * stops, 8);
      assert.ok(h.outcomes.some((o) => o.optimal));
      for (const o of h.outcomes) {
        const route = o['route'] as string[] | null;
        if (route !== null) assert.deepEqual([...route].sort(), [...r.stops].sort(), 'an outcome orders this route\'s own stops');
      }
    }
    assert.deepEqual(routes.filter((r) => r.quantum_result === undefined).map((r) => r.measurement_counts), [null]);
  });

  it('qubo and qaoa route: the same seed gives the same answer with or without counts', () => {
    const withCounts = (p: Record<string, unknown>) => ({ ...p, options: { include_counts: true } });
    const pairs: [string, () => ReturnType<typeof solveRoute>, () => ReturnType<typeof solveRoute>][] = [
      ['qubo', () => solvePortfolio(portfolioProblemSchema.parse(portfolioProblem()), ctx(5)), () => solvePortfolio(portfolioProblemSchema.parse(withCounts(portfolioProblem())), ctx(5))],
      ['route', () => solveRoute(routeProblemSchema.parse(routeProblem(3)), ctx(5)), () => solveRoute(routeProblemSchema.parse(withCounts(routeProblem(3))), ctx(5))],
    ];
    for (const [name, plain, counted] of pairs) {
      const a = plain();
      const b = counted();
      const strip = (solution: Record<string, unknown>): Record<string, unknown> => {
        const { measurement_counts: _counts, ...rest } = solution;
        const q = rest['quantum_result'] as Record<string, unknown> | undefined;
        if (q === undefined) return rest;
        const { measurement_counts: _routeCounts, ...quantum } = q;
        return { ...rest, quantum_result: quantum };
      };
      assert.notEqual(JSON.stringify(b.solution).indexOf('measurement_counts'), -1, name);
      assert.deepEqual(strip(b.solution), a.solution, name);
      assert.deepEqual(b.meta, a.meta, name);
    }
  });

  it('asked for counts where none exist: measurement_counts null and the reason, on every path', () => {
    const asked = { include_counts: true };
    const manyAssets = Array.from({ length: 30 }, (_, i) => ({ id: `A${i}`, expected_return: 0.05 + (i % 7) / 100, risk: 0.1 + (i % 5) / 50 }));
    const points = blobs({ a: [0, 0], b: [3, 3] }, 4, 0.3);
    const paths: [string, () => Record<string, unknown>][] = [
      ['grover classical scan', () => solvePatternSearch(patternSearchProblemSchema.parse({ ...patternProblem(8, 1), search_space_size: 2 ** 40, options: asked }), ctx()).solution],
      ['grover no match', () => solvePatternSearch(patternSearchProblemSchema.parse({ ...patternProblem(8, 1), target: { pattern: 'ABSENT', min_confidence: 0.5 }, options: asked }), ctx()).solution],
      ['qubo proven infeasible', () => solvePortfolio(portfolioProblemSchema.parse({ ...portfolioProblem({ max_assets: 1, max_risk: 0.01, min_return: 0.5 }), options: asked }), ctx()).solution],
      ['qubo simulated annealing', () => solvePortfolio(portfolioProblemSchema.parse({ type: 'portfolio_allocation', assets: manyAssets, constraints: { max_assets: 5, max_risk: 1, min_return: 0 }, options: asked }), ctx()).solution],
      ['route of one stop', () => solveRoute(routeProblemSchema.parse(routeProblem(1, { options: asked })), ctx()).solution],
      ['route window by window', () => (solveRoute(routeProblemSchema.parse(routeProblem(5, { options: asked })), ctx()).solution['quantum_result'] as Record<string, unknown>)],
      ['qrng', () => solveQrng(qrngProblemSchema.parse({ type: 'qrng', bits: 16, options: asked }), ctx(), seededRng(1)).solution],
      ['qkmeans', () => solveClustering(clusteringProblemSchema.parse({ type: 'clustering', data: points.map((p, i) => ({ id: `p${i}`, features: p.features })), k: 2, max_iterations: 3, options: asked }), ctx()).solution],
      ['qsvm', () => solveClassification(classificationProblemSchema.parse({ type: 'classification', training_data: points, predict: [{ features: [1, 1] }], options: asked }), { ...ctx(), shots: 64 }).solution],
    ];
    for (const [name, solve] of paths) {
      const solution = solve();
      assert.equal(solution['measurement_counts'], null, name);
      assert.equal(typeof solution['measurement_counts_unavailable'], 'string', name);
      assert.ok((solution['measurement_counts_unavailable'] as string).length > 10, name);
    }
    // With several vehicles, a route with no circuit says so on its own entry.
    const oneStopEach = { type: 'route_optimization', nodes: berlinNodes.slice(0, 3), constraints: { max_distance_km: 100, vehicle_count: 2 }, options: asked };
    for (const r of solveRoute(routeProblemSchema.parse(oneStopEach), ctx()).solution['routes'] as Record<string, unknown>[]) {
      assert.equal(r['measurement_counts'], null);
      assert.match(r['measurement_counts_unavailable'] as string, /no circuit ran/);
    }
    // Not asked: not there at all.
    assert.equal('measurement_counts' in solveQrng(qrngProblemSchema.parse({ type: 'qrng', bits: 16 }), ctx(), seededRng(1)).solution, false);
  });

  it('grover: a record cut for the histogram (200) or the answer (1000) never splits a surrogate pair', () => {
    const record = `${'x'.repeat(199)}😀${'y'.repeat(798)}😀 FRAUD`;
    const problem = { type: 'pattern_search', dataset: [record, 'ok', 'ok', 'ok'].join('\n'), target: { pattern: 'FRAUD', min_confidence: 0.1 }, search_space_size: 4, options: { include_counts: true } };
    const { solution } = solvePatternSearch(patternSearchProblemSchema.parse(problem), ctx());
    const shown = (solution['measurement_counts'] as MeasurementCounts).outcomes.find((o) => o.index === 0)!['record'] as string;
    assert.equal(shown, 'x'.repeat(199));
    assert.equal(solution['record'], `${'x'.repeat(199)}😀${'y'.repeat(798)}`);
    for (const text of [shown, solution['record'] as string]) assert.ok(text.isWellFormed(), 'no lone surrogate');
  });

  it('rejects counts_top_k out of range (the schema bounds the answer)', () => {
    for (const k of [0, 257, 1.5]) {
      assert.equal(patternSearchProblemSchema.safeParse({ ...patternProblem(8, 1), options: { include_counts: true, counts_top_k: k } }).success, false, `k=${k}`);
    }
  });
});
