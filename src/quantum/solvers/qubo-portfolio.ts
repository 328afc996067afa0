import { diagonalFromFunction } from '../simulator/diagonals.ts';
import type { Rng } from '../simulator/rng.ts';
import type { PortfolioProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { quantumEvidence, runQaoa, WALSH_MAX_QUBITS } from './qaoa-runner.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * qubo / portfolio_allocation: choose a set S of assets, held in equal weights 1/|S|.
 *   expected_return(S) = mean of the selected expected_return values
 *   risk(S)            = √((1-ρ)·Σσ_i² + ρ·(Σσ_i)²) / |S|   (volatility of the equal-weight
 *                        portfolio when every pair of assets has correlation ρ; σ = `risk`)
 * ρ is `correlation` (default 0.3); ρ = 1 makes risk the mean of the selected risks.
 * S is feasible when 1 ≤ |S| ≤ max_assets, risk ≤ max_risk and expected_return ≥ min_return.
 * Among feasible sets the solver minimises  -expected_return + λ·risk  (λ = `risk_aversion`,
 * default 0.5).
 *
 * Up to QAOA_MAX_ASSETS assets: QAOA (one qubit per asset) whose cost diagonal is the exact
 * penalised model — a feasible selection costs its objective, an infeasible one (empty, more than
 * max_assets, over max_risk, under min_return) costs more than every feasible one — so the circuit
 * optimises the real problem, any count 1..max_assets included. Every measured selection is then
 * scored with the exact model and the best feasible one is returned, still labelled `qaoa` even
 * when the enumerated optimum is better: `optimality_gap` says by how much, and
 * `solution.quantum` gives the exact probability of the optimum in the final state against
 * uniform guessing. Beyond: simulated annealing on the exact model, labelled `simulated_annealing`.
 * Up to EXHAUSTIVE_MAX_ASSETS assets, every selection is also enumerated: the classical optimum
 * and the gap are reported, and an infeasible instance is proven so. An infeasible instance gets
 * `feasible: false`, an empty selection and the reason — never a random pick.
 */
export const QAOA_MAX_ASSETS = 16;
const EXHAUSTIVE_MAX_ASSETS = 22;
const DEFAULT_CORRELATION = 0.3;
const DEFAULT_RISK_AVERSION = 0.5;
const TOLERANCE = 1e-12;

interface Model {
  r: number[];
  s: number[];
  rho: number;
  lambda: number;
  maxAssets: number;
  maxRisk: number;
  minReturn: number;
}

interface Stats {
  count: number;
  ret: number;
  risk: number;
  feasible: boolean;
  objective: number;
}

function stats(model: Model, count: number, sumR: number, sumS: number, sumS2: number): Stats {
  if (count === 0) return { count, ret: 0, risk: 0, feasible: false, objective: Infinity };
  const ret = sumR / count;
  const risk = Math.sqrt(Math.max(0, (1 - model.rho) * sumS2 + model.rho * sumS * sumS)) / count;
  const feasible = count <= model.maxAssets && risk <= model.maxRisk + TOLERANCE && ret >= model.minReturn - TOLERANCE;
  return { count, ret, risk, feasible, objective: -ret + model.lambda * risk };
}

const membersOf = (z: number, n: number): number[] => [...Array(n).keys()].filter((i) => (z >> i) & 1);

/** The selection whose members are the set bits of z, scored without building a member array (assets in index order). */
function evaluateMask(model: Model, z: number): Stats {
  let count = 0;
  let sumR = 0;
  let sumS = 0;
  let sumS2 = 0;
  for (let i = 0; i < model.r.length; i++) {
    if (((z >> i) & 1) === 0) continue;
    count++;
    sumR += model.r[i]!;
    sumS += model.s[i]!;
    sumS2 += model.s[i]! ** 2;
  }
  return stats(model, count, sumR, sumS, sumS2);
}

/** The enumerated optimum (exhaustiveBest), or null when no selection is feasible. */
function exhaustive(model: Model): { members: number[]; stats: Stats } | null {
  const z = exhaustiveBest(model);
  return z < 0 ? null : { members: membersOf(z, model.r.length), stats: evaluateMask(model, z) };
}

/**
 * Every selection, in Gray-code order (one asset changes per step): O(2^n); the best feasible
 * selection's bit mask, or -1. Numbers only, no objects: V8 compiles this loop on-stack while it
 * runs, and an object built in the same function (the old `best = { z, stats }`, or the result
 * literal) lacked type feedback in that code, so it was deoptimised and recompiled on every
 * solve — background compilation that took CPU from the other worker of a parallel batch.
 */
function exhaustiveBest(model: Model): number {
  const n = model.r.length;
  let count = 0;
  let sumR = 0;
  let sumS = 0;
  let sumS2 = 0;
  let z = 0;
  let bestZ = -1;
  let bestObjective = Infinity;
  for (let k = 1; k < 2 ** n; k++) {
    const bit = 31 - Math.clz32(k & -k);
    const sign = (z >> bit) & 1 ? -1 : 1;
    z ^= 1 << bit;
    count += sign;
    sumR += sign * model.r[bit]!;
    sumS += sign * model.s[bit]!;
    sumS2 += sign * model.s[bit]! ** 2;
    if (count > model.maxAssets) continue;
    const ret = sumR / count;
    const risk = Math.sqrt(Math.max(0, (1 - model.rho) * sumS2 + model.rho * sumS * sumS)) / count;
    if (risk > model.maxRisk + TOLERANCE || ret < model.minReturn - TOLERANCE) continue;
    const objective = -ret + model.lambda * risk;
    if (objective < bestObjective - TOLERANCE) {
      bestZ = z;
      bestObjective = objective;
    }
  }
  return bestZ;
}

/** Simulated annealing on the exact model, violations penalised; restarts keep the best feasible state. */
function anneal(model: Model, rng: Rng): { members: number[]; stats: Stats } | null {
  const n = model.r.length;
  const spread = Math.max(...model.r.map(Math.abs), ...model.s, 1e-9);
  const penalty = (st: Stats): number => {
    if (st.count === 0) return 10 * spread;
    return (
      10 * spread * (Math.max(0, st.count - model.maxAssets) + (st.feasible ? 0 : 1)) +
      10 * (Math.max(0, st.risk - model.maxRisk) + Math.max(0, model.minReturn - st.ret))
    );
  };
  const steps = Math.min(400_000, 2000 * n);
  let best: { members: number[]; stats: Stats } | null = null;
  for (let restart = 0; restart < 4; restart++) {
    const x = new Uint8Array(n);
    let count = 0;
    let sumR = 0;
    let sumS = 0;
    let sumS2 = 0;
    const flip = (i: number): void => {
      const sign = x[i] ? -1 : 1;
      x[i] = x[i] ? 0 : 1;
      count += sign;
      sumR += sign * model.r[i]!;
      sumS += sign * model.s[i]!;
      sumS2 += sign * model.s[i]! ** 2;
    };
    const energyOf = (st: Stats): number => (st.count === 0 ? 0 : st.objective) + penalty(st);
    let current = stats(model, count, sumR, sumS, sumS2);
    let energy = energyOf(current);
    const t0 = spread;
    const t1 = spread * 1e-4;
    for (let step = 0; step < steps; step++) {
      const temperature = t0 * (t1 / t0) ** (step / steps);
      const i = Math.floor(rng.next() * n);
      flip(i);
      const next = stats(model, count, sumR, sumS, sumS2);
      const e = energyOf(next);
      if (e <= energy || rng.next() < Math.exp((energy - e) / temperature)) {
        current = next;
        energy = e;
        if (current.feasible && (best === null || current.objective < best.stats.objective - TOLERANCE)) {
          best = { members: [...x.keys()].filter((k) => x[k] === 1), stats: current };
        }
      } else {
        flip(i);
      }
    }
  }
  return best;
}

export function solvePortfolio(problem: PortfolioProblem, ctx: SolverContext): SolverOutput {
  const { assets, constraints } = problem;
  const n = assets.length;
  const model: Model = {
    r: assets.map((a) => a.expected_return),
    s: assets.map((a) => a.risk),
    rho: problem.correlation ?? DEFAULT_CORRELATION,
    lambda: problem.risk_aversion ?? DEFAULT_RISK_AVERSION,
    maxAssets: constraints.max_assets,
    maxRisk: constraints.max_risk,
    minReturn: constraints.min_return,
  };
  const exact = n <= EXHAUSTIVE_MAX_ASSETS ? exhaustive(model) : undefined;
  const round = (x: number): number => Math.round(x * 1e10) / 1e10;
  const answer = (method: string, found: { members: number[]; stats: Stats } | null, extra: Record<string, unknown>, meta: SolverOutput['meta']): SolverOutput => {
    const solution: Record<string, unknown> = { method };
    if (found === null) {
      const reason =
        exact === null
          ? 'no selection satisfies max_assets, max_risk and min_return together (checked exhaustively)'
          : 'no feasible selection was found (the instance is too large to prove infeasibility exhaustively)';
      Object.assign(solution, { feasible: false, selected: [], expected_return: null, risk: null, reason });
    } else {
      Object.assign(solution, {
        feasible: true,
        selected: found.members.map((i) => assets[i]!.id),
        expected_return: round(found.stats.ret),
        risk: round(found.stats.risk),
        objective: round(found.stats.objective),
      });
    }
    if (exact !== undefined) {
      solution['classical_optimum'] = exact === null ? null : { selected: exact.members.map((i) => assets[i]!.id), objective: round(exact.stats.objective) };
      if (exact !== null && found !== null) solution['optimality_gap'] = Math.max(0, round(found.stats.objective - exact.stats.objective));
    }
    solution['model'] = { weights: 'equal', correlation: model.rho, risk_aversion: model.lambda, objective: 'minimise -expected_return + risk_aversion * risk' };
    return { solution: { ...solution, ...extra }, meta };
  };

  if (exact === null) {
    // proven infeasible: say so without sampling anything
    return answer('exhaustive_search', null, {}, { shots: 0, optimal_count: 0, energy: 0, depth: 0 });
  }
  if (n > QAOA_MAX_ASSETS) {
    const found = anneal(model, ctx.rng);
    return answer(
      'simulated_annealing',
      found,
      { reason_classical: `${n} assets exceed the QAOA ceiling of ${QAOA_MAX_ASSETS} qubits on this service` },
      { shots: 0, optimal_count: 0, energy: found === null ? 0 : found.stats.objective, depth: 0 },
    );
  }

  // The QAOA cost is the exact penalised model: every feasible selection costs its objective
  // (within ±bound), every infeasible one costs more than any feasible one, graded by how far
  // it misses (so the landscape still points towards feasibility).
  const maxR = Math.max(...model.r.map(Math.abs)) || 1;
  const maxS = Math.max(...model.s) || 1;
  const all = Array.from({ length: 2 ** n }, (_, z) => evaluateMask(model, z));
  let lo = Infinity;
  let hi = -Infinity;
  for (const st of all) {
    if (!st.feasible) continue;
    lo = Math.min(lo, st.objective);
    hi = Math.max(hi, st.objective);
  }
  const span = hi - lo || 1;
  const diagonal = diagonalFromFunction(n, (z) => {
    const st = all[z]!;
    if (st.feasible) return (st.objective - lo) / span;
    if (st.count === 0) return 2;
    const miss = Math.max(0, st.count - model.maxAssets) / n + Math.max(0, st.risk - model.maxRisk) / maxS + Math.max(0, model.minReturn - st.ret) / maxR;
    return 1 + Math.min(1, miss);
  });
  const run = runQaoa(n, { diagonal, label: 'portfolio_cost' }, { shots: ctx.shots, rng: ctx.rng, layers: 2, threads: ctx.threads });
  let best: { z: number; members: number[]; stats: Stats } | null = null;
  for (const z of run.counts.keys()) {
    const st = all[z]!;
    if (st.feasible && (best === null || st.objective < best.stats.objective - TOLERANCE || (Math.abs(st.objective - best.stats.objective) <= TOLERANCE && z < best.z))) {
      best = { z, members: membersOf(z, n), stats: st };
    }
  }
  // every bitstring as good as the enumerated optimum
  const optimal: number[] = [];
  all.forEach((st, z) => {
    if (st.feasible && st.objective <= exact!.stats.objective + TOLERANCE) optimal.push(z);
  });
  const circuit = summarizeCircuit(run.circuit, problem.options?.include_qasm);
  if (circuit.qasm === null) {
    circuit.qasm_unavailable = `the cost layer is a precomputed diagonal; its exact gate form (Walsh expansion, up to n·2ⁿ gates) is built up to ${WALSH_MAX_QUBITS} qubits, and this circuit has ${n}`;
  }
  const extra = { qubits: n, circuit, quantum: quantumEvidence(run.state, optimal), feasible_shots: [...run.counts].filter(([z]) => all[z]!.feasible).reduce((s, [, c]) => s + c, 0) };
  const meta = { shots: ctx.shots, optimal_count: best === null ? 0 : run.counts.get(best.z)!, energy: run.energy, depth: circuit.depth };
  if (best === null) {
    // A feasible selection exists (the enumeration found it) but no shot measured one: answer
    // with the enumerated optimum, labelled as such.
    return answer('exhaustive_search', exact!, { ...extra, reason_classical: 'QAOA measured no feasible selection' }, { ...meta, optimal_count: 0 });
  }
  return answer('qaoa', best, extra, meta);
}
