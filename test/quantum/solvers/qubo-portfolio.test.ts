import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { portfolioProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { solvePortfolio } from '../../../src/quantum/solvers/qubo-portfolio.ts';
import { portfolioAssets, portfolioProblem } from '../fixtures.ts';

const solve = (problem: Record<string, unknown>, seed = 1) => solvePortfolio(portfolioProblemSchema.parse(problem), { shots: 1024, rng: seededRng(seed) });

/** Independent brute force over every subset with the documented model (ρ = 0.3, λ = 0.5). */
function bruteForce(assets: { id: string; expected_return: number; risk: number }[], c: { max_assets: number; max_risk: number; min_return: number }): string[] | null {
  let best: { ids: string[]; value: number } | null = null;
  for (let mask = 1; mask < 2 ** assets.length; mask++) {
    const s = assets.filter((_, i) => (mask >> i) & 1);
    const k = s.length;
    const ret = s.reduce((a, x) => a + x.expected_return, 0) / k;
    const sum = s.reduce((a, x) => a + x.risk, 0);
    const sum2 = s.reduce((a, x) => a + x.risk ** 2, 0);
    const risk = Math.sqrt(0.7 * sum2 + 0.3 * sum * sum) / k;
    if (k > c.max_assets || risk > c.max_risk || ret < c.min_return) continue;
    const value = -ret + 0.5 * risk;
    if (best === null || value < best.value) best = { ids: s.map((x) => x.id), value };
  }
  return best?.ids ?? null;
}

/** The documented objective of a selection, −return + λ·risk, computed the way bruteForce does. */
function objectiveOf(assets: { id: string; expected_return: number; risk: number }[], ids: readonly string[]): number {
  const s = assets.filter((a) => ids.includes(a.id));
  const k = s.length;
  const sum = s.reduce((a, x) => a + x.risk, 0);
  const sum2 = s.reduce((a, x) => a + x.risk ** 2, 0);
  return -s.reduce((a, x) => a + x.expected_return, 0) / k + 0.5 * (Math.sqrt(0.7 * sum2 + 0.3 * sum * sum) / k);
}

describe('qubo / portfolio_allocation', () => {
  for (const constraints of [
    { max_assets: 3, max_risk: 0.15, min_return: 0.08 },
    { max_assets: 2, max_risk: 0.3, min_return: 0.1 },
    { max_assets: 4, max_risk: 0.1, min_return: 0.05 },
  ]) {
    it(`matches brute force with QAOA for ${JSON.stringify(constraints)}`, () => {
      const { solution, meta } = solve(portfolioProblem(constraints));
      const expected = bruteForce(portfolioAssets, constraints);
      assert.equal(solution['method'], 'qaoa');
      assert.deepEqual([...(solution['selected'] as string[])].sort(), [...expected!].sort());
      assert.equal(solution['optimality_gap'], 0);
      assert.ok((solution['risk'] as number) <= constraints.max_risk + 1e-12);
      assert.ok((solution['expected_return'] as number) >= constraints.min_return - 1e-12);
      assert.ok(meta.optimal_count > 0, 'the answer was measured at least once');
      assert.equal((solution['circuit'] as { qubits: number }).qubits, portfolioAssets.length);
    });
  }

  it('answers infeasible constraints clearly, with no pick', () => {
    const { solution } = solve(portfolioProblem({ max_assets: 2, max_risk: 0.01, min_return: 0.2 }));
    assert.equal(solution['feasible'], false);
    assert.deepEqual(solution['selected'], []);
    assert.match(solution['reason'] as string, /checked exhaustively/);
  });

  it('uses labelled simulated annealing beyond the QAOA ceiling and still finds the optimum', () => {
    // 26 assets (over the 24-qubit ceiling, too many to enumerate): two strong assets and
    // 24 weak ones, at most 2 held, so the optimum is known without a brute force
    const assets = Array.from({ length: 26 }, (_, i) => ({ id: `A${i}`, expected_return: i === 7 || i === 19 ? 0.3 : 0.04 + ((i * 7) % 11) / 200, risk: 0.1 + ((i * 5) % 13) / 100 }));
    const constraints = { max_assets: 2, max_risk: 0.5, min_return: 0.05 };
    const { solution, meta } = solve({ type: 'portfolio_allocation', assets, constraints });
    assert.equal(solution['method'], 'simulated_annealing');
    assert.match(solution['reason_classical'] as string, /26 assets exceed the QAOA ceiling of 24 qubits/);
    assert.equal(meta.shots, 0);
    assert.equal(solution['classical_optimum'], undefined, 'no enumeration beyond 24 assets');
    assert.deepEqual([...(solution['selected'] as string[])].sort(), ['A19', 'A7']);
  });

  it('runs QAOA beyond 16 assets with angles transferred from a 12-asset sub-instance', () => {
    // 18 assets: the full circuit runs once at 18 qubits with angles optimised on 12 of them
    const assets = Array.from({ length: 18 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + ((i * 7) % 11) / 80, risk: 0.05 + ((i * 5) % 13) / 40 }));
    const constraints = { max_assets: 5, max_risk: 0.15, min_return: 0.09 };
    const { solution, meta } = solve({ type: 'portfolio_allocation', assets, constraints }, 3);
    const qaoa = solution['qaoa'] as { angles: string; optimised_on_qubits: number; optimiser_evaluations: number; gammas: number[] };
    const quantum = solution['quantum'] as { amplification: number };
    assert.equal(solution['method'], 'qaoa');
    assert.equal((solution['circuit'] as { qubits: number }).qubits, 18);
    assert.match(qaoa.angles, /^transferred/);
    assert.equal(qaoa.optimised_on_qubits, 12);
    assert.ok(qaoa.optimiser_evaluations > 50);
    assert.equal(qaoa.gammas.length, 2);
    // the classical certificate is the independent brute force's optimum
    const expected = bruteForce(assets, constraints)!;
    assert.deepEqual([...(solution['classical_optimum'] as { selected: string[] }).selected].sort(), [...expected].sort());
    // the gap rounds up at 10 decimals: never below the true gap, less than one step above it
    const gap = solution['optimality_gap'] as number;
    const trueGap = objectiveOf(assets, solution['selected'] as string[]) - objectiveOf(assets, expected);
    assert.ok(gap >= trueGap - 1e-12 && gap < trueGap + 1e-10 + 1e-12, `gap ${gap} vs true ${trueGap}`);
    // the transferred angles amplify the optimum far above uniform guessing (2^-18)
    assert.ok(quantum.amplification > 100, `amplification ${quantum.amplification}`);
    assert.ok((solution['risk'] as number) <= constraints.max_risk + 1e-12);
    assert.ok((solution['expected_return'] as number) >= constraints.min_return - 1e-12);
    assert.ok(meta.optimal_count > 0);
  });

  it('falls back to labelled annealing when the simulator budget cannot hold the circuit', () => {
    const saved = process.env['SVC_SIM_MAX_BYTES'];
    process.env['SVC_SIM_MAX_BYTES'] = String(3 * 16 * 2 ** 4); // three 4-qubit state vectors; the fixture has 6 assets
    try {
      const constraints = { max_assets: 3, max_risk: 0.15, min_return: 0.08 };
      const { solution } = solve(portfolioProblem(constraints));
      assert.equal(solution['method'], 'simulated_annealing');
      assert.match(solution['reason_classical'] as string, /6 assets exceed the QAOA ceiling of 4 qubits/);
      assert.deepEqual([...(solution['selected'] as string[])].sort(), [...bruteForce(portfolioAssets, constraints)!].sort());
    } finally {
      if (saved === undefined) delete process.env['SVC_SIM_MAX_BYTES'];
      else process.env['SVC_SIM_MAX_BYTES'] = saved;
    }
  });
});

describe('qubo / portfolio_allocation: QAOA optimises the real problem', () => {
  // Two strong assets, fourteen weak ones: the optimum holds 2 assets although up to 8 are allowed.
  const assets = Array.from({ length: 16 }, (_, i) => ({
    id: `S${i}`,
    expected_return: i < 2 ? 0.2 : 0.02 + (i % 5) / 200,
    risk: i < 2 ? 0.2 : 0.1 + (i % 7) / 100,
  }));
  const constraints = { max_assets: 8, max_risk: 1, min_return: 0 };

  it('finds the 2-asset optimum when max_assets is 8 (any count up to the maximum is allowed)', () => {
    const { solution } = solve({ type: 'portfolio_allocation', assets, constraints });
    assert.equal(solution['method'], 'qaoa');
    assert.deepEqual([...(solution['selected'] as string[])].sort(), [...bruteForce(assets, constraints)!].sort());
    assert.equal((solution['selected'] as string[]).length, 2);
    assert.equal(solution['optimality_gap'], 0);
  });

  it('reports the exact probability of the optimum, amplified well above uniform guessing', () => {
    for (const problem of [
      { type: 'portfolio_allocation', assets, constraints },
      portfolioProblem({ max_assets: 3, max_risk: 0.15, min_return: 0.08 }),
    ]) {
      const { solution } = solve(problem);
      const q = solution['quantum'] as { p_optimal: number; p_uniform: number; amplification: number };
      assert.ok(q.p_uniform > 0 && q.p_uniform < 0.05, JSON.stringify(q));
      assert.ok(q.amplification > 3, `amplification ${q.amplification}`);
      assert.ok(Math.abs(q.amplification - q.p_optimal / q.p_uniform) < 1e-3 * q.amplification);
    }
  });
});

describe('qubo / portfolio_allocation: magnitudes', () => {
  it('refuses magnitudes whose sums would overflow (no false "infeasible")', () => {
    const r = portfolioProblemSchema.safeParse({
      type: 'portfolio_allocation',
      assets: [{ id: 'a', expected_return: 1e308, risk: 0.1 }, { id: 'b', expected_return: -1e308, risk: 0.1 }],
      constraints: { max_assets: 2, max_risk: 1, min_return: 0 },
    });
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['assets', 0, 'expected_return']);
    const edge = solve({ type: 'portfolio_allocation', assets: [{ id: 'a', expected_return: 1e12, risk: 1e12 }, { id: 'b', expected_return: -1e12, risk: 1e12 }], constraints: { max_assets: 2, max_risk: 1e12, min_return: -1e12 } });
    assert.equal(edge.solution['feasible'], true);
    assert.deepEqual(edge.solution['selected'], ['a']);
  });
});
