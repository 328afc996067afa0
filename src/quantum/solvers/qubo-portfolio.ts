import { maxQubits } from '../simulator/memory-guard.ts';
import type { Rng } from '../simulator/rng.ts';
import type { PortfolioProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { countsFields, measurementCounts } from './measurement-counts.ts';
import { quantumEvidence, runQaoa, WALSH_MAX_QUBITS } from './qaoa-runner.ts';
import { roundNearest, roundUp } from './safe-rounding.ts';
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
 * optimises the real problem, any count 1..max_assets included. Up to QAOA_OPTIMISED_MAX_ASSETS
 * the angles are optimised on the instance itself (hundreds of state-vector evaluations); beyond,
 * one evaluation costs seconds, so the angles are optimised on a TRANSFER_ASSETS-asset
 * sub-instance and the full circuit runs once with them (parameter transfer: QAOA angles for a
 * standardised cost concentrate across instances of one problem family). Every measured
 * selection is then scored with the exact model and the best feasible one is returned, still
 * labelled `qaoa` even when the enumerated optimum is better: `optimality_gap` says by how much,
 * and `solution.quantum` gives the exact probability of the optimum in the final state against
 * uniform guessing. Beyond QAOA_MAX_ASSETS (or the simulator's memory here): simulated annealing
 * on the exact model, labelled `simulated_annealing`. Up to EXHAUSTIVE_MAX_ASSETS assets, every
 * selection is also enumerated: the classical optimum and the gap are reported, and an
 * infeasible instance is proven so. An infeasible instance gets `feasible: false`, an empty
 * selection and the reason — never a random pick.
 */
export const QAOA_MAX_ASSETS = 24;
/** Up to this many assets QAOA's angles are optimised on the instance itself. */
export const QAOA_OPTIMISED_MAX_ASSETS = 16;
/** Size of the sub-instance larger problems take their angles from. */
export const TRANSFER_ASSETS = 12;
const QAOA_LAYERS = 2;
const EXHAUSTIVE_MAX_ASSETS = 24;
const DEFAULT_CORRELATION = 0.3;
const DEFAULT_RISK_AVERSION = 0.5;
const TOLERANCE = 1e-12;

/**
 * The most assets QAOA takes on this machine: QAOA_MAX_ASSETS, or fewer when the simulator's
 * memory budget is smaller — the state, the cost diagonal and its working copies take about
 * three state vectors' worth (≈ 0.8 GiB at 24 qubits).
 */
export function portfolioQaoaCeiling(): number {
  return Math.min(QAOA_MAX_ASSETS, maxQubits(3));
}

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

/** Feasible objectives over every selection: their range and the best selection (bit mask, -1 if none). */
interface Scan {
  lo: number;
  hi: number;
  bestZ: number;
}

/**
 * Every selection, in Gray-code order (one asset changes per step, so the sums update in O(1)):
 * O(2^n) time. With `fill`, also writes each selection's objective (feasible, flagged in
 * `fill.feasible`) or 1 + its normalised shortfall (infeasible) into `fill.diagonal`.
 * Numbers only, no objects: V8 compiles this loop on-stack while it runs, and an object built in
 * the same function (a `best = { z, stats }`) lacked type feedback in that code, so it was
 * deoptimised and recompiled on every solve — background compilation that took CPU from the
 * other worker of a parallel batch.
 */
function scanSelections(model: Model, fill?: { diagonal: Float64Array; feasible: Uint8Array }): Scan {
  const n = model.r.length;
  const maxR = Math.max(...model.r.map(Math.abs)) || 1;
  const maxS = Math.max(...model.s) || 1;
  const maxRisk = model.maxRisk + TOLERANCE;
  const minReturn = model.minReturn - TOLERANCE;
  let count = 0;
  let sumR = 0;
  let sumS = 0;
  let sumS2 = 0;
  let z = 0;
  let bestZ = -1;
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 1; k < 2 ** n; k++) {
    const bit = 31 - Math.clz32(k & -k);
    const sign = (z >> bit) & 1 ? -1 : 1;
    z ^= 1 << bit;
    count += sign;
    sumR += sign * model.r[bit]!;
    sumS += sign * model.s[bit]!;
    sumS2 += sign * model.s[bit]! ** 2;
    if (count > model.maxAssets && fill === undefined) continue;
    const ret = sumR / count;
    const risk = Math.sqrt(Math.max(0, (1 - model.rho) * sumS2 + model.rho * sumS * sumS)) / count;
    if (count <= model.maxAssets && risk <= maxRisk && ret >= minReturn) {
      const objective = -ret + model.lambda * risk;
      if (objective < lo - TOLERANCE) {
        bestZ = z;
        lo = objective;
      } else if (objective < lo) lo = objective;
      if (objective > hi) hi = objective;
      if (fill !== undefined) {
        fill.diagonal[z] = objective;
        fill.feasible[z] = 1;
      }
    } else if (fill !== undefined) {
      const over = Math.max(0, count - model.maxAssets) / n + Math.max(0, risk - maxRisk) / maxS + Math.max(0, minReturn - ret) / maxR;
      fill.diagonal[z] = 1 + Math.min(1, over);
    }
  }
  return { lo, hi, bestZ };
}

/**
 * The QAOA cost, the exact penalised model: a feasible selection costs its objective mapped
 * to [0, 1] over the feasible range (0 = the best), every infeasible one costs more — 1 + how
 * far it misses (more assets than allowed, risk over, return under; at most 2), the empty
 * selection 2 — so the landscape still points towards feasibility. Also returns the scan and
 * the selections within TOLERANCE of the best objective.
 */
function penalisedDiagonal(model: Model): { scan: Scan; diagonal: Float64Array; optimal: number[] } {
  const size = 2 ** model.r.length;
  const diagonal = new Float64Array(size);
  const feasible = new Uint8Array(size);
  const scan = scanSelections(model, { diagonal, feasible });
  diagonal[0] = 2;
  const lo = scan.bestZ >= 0 ? scan.lo : 0;
  const span = scan.bestZ >= 0 ? scan.hi - scan.lo || 1 : 1;
  const optimal: number[] = [];
  for (let z = 1; z < size; z++) {
    if (feasible[z] === 0) continue;
    const objective = diagonal[z]!;
    diagonal[z] = (objective - lo) / span;
    if (objective <= lo + TOLERANCE) optimal.push(z);
  }
  return { scan, diagonal, optimal };
}

/**
 * The sub-instance larger problems take QAOA angles from: TRANSFER_ASSETS assets spread evenly
 * over the instance's assets ranked by their own objective (so it spans good and poor ones),
 * the same risk model and thresholds, and max_assets scaled to its size.
 */
function transferModel(model: Model): Model {
  const n = model.r.length;
  const m = TRANSFER_ASSETS;
  const ranked = [...Array(n).keys()].sort((a, b) => -model.r[a]! + model.lambda * model.s[a]! - (-model.r[b]! + model.lambda * model.s[b]!) || a - b);
  const picked = Array.from({ length: m }, (_, i) => ranked[Math.round((i * (n - 1)) / (m - 1))]!);
  return {
    ...model,
    r: picked.map((i) => model.r[i]!),
    s: picked.map((i) => model.s[i]!),
    maxAssets: Math.max(1, Math.min(m, Math.round((model.maxAssets * m) / n))),
  };
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
  const ceiling = portfolioQaoaCeiling();
  // the QAOA path scans while it builds the cost diagonal; otherwise scan only what is enumerable
  const penalised = n <= ceiling ? penalisedDiagonal(model) : undefined;
  const scan = penalised?.scan ?? (n <= EXHAUSTIVE_MAX_ASSETS ? scanSelections(model) : undefined);
  // null: proven infeasible; undefined: too large to enumerate
  const exact = scan === undefined ? undefined : scan.bestZ < 0 ? null : { members: membersOf(scan.bestZ, n), stats: evaluateMask(model, scan.bestZ) };
  // measured values: nearest at 10 decimals, which hides only floating noise
  const round = (x: number): number => roundNearest(x, 10);
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
      if (exact !== null && found !== null) {
        // a gap rounds up (never understates); within TOLERANCE the selection is one of the optimal ones
        const gap = found.stats.objective - exact.stats.objective;
        solution['optimality_gap'] = gap <= TOLERANCE ? 0 : roundUp(gap, 10);
      }
    }
    solution['model'] = { weights: 'equal', correlation: model.rho, risk_aversion: model.lambda, objective: 'minimise -expected_return + risk_aversion * risk' };
    return { solution: { ...solution, ...extra }, meta };
  };

  if (exact === null) {
    // proven infeasible: say so without sampling anything
    return answer('exhaustive_search', null, countsFields(problem.options, () => 'no circuit was sampled: enumeration proved no selection feasible'), { shots: 0, optimal_count: 0, energy: 0, depth: 0 });
  }
  if (penalised === undefined) {
    const found = anneal(model, ctx.rng);
    return answer(
      'simulated_annealing',
      found,
      { reason_classical: `${n} assets exceed the QAOA ceiling of ${ceiling} qubits on this service`, ...countsFields(problem.options, () => 'no circuit ran: simulated annealing answered (too many assets for QAOA)') },
      { shots: 0, optimal_count: 0, energy: found === null ? 0 : found.stats.objective, depth: 0 },
    );
  }

  const { diagonal, optimal } = penalised;
  // beyond QAOA_OPTIMISED_MAX_ASSETS: angles optimised on the sub-instance (12 qubits, one thread)
  const sub = n > QAOA_OPTIMISED_MAX_ASSETS ? transferModel(model) : undefined;
  const tuned = sub && runQaoa(TRANSFER_ASSETS, { diagonal: penalisedDiagonal(sub).diagonal }, { shots: 0, rng: ctx.rng, layers: QAOA_LAYERS, threads: 1 });
  const fixedAngles = tuned && { gammas: tuned.gammas, betas: tuned.betas };
  const run = runQaoa(n, { diagonal, label: 'portfolio_cost' }, { shots: ctx.shots, rng: ctx.rng, layers: QAOA_LAYERS, threads: ctx.threads, fixedAngles, sample: ctx.sample });
  const scored = new Map<number, Stats>();
  for (const z of run.counts.keys()) scored.set(z, evaluateMask(model, z));
  let best: { z: number; members: number[]; stats: Stats } | null = null;
  for (const [z, st] of scored) {
    if (st.feasible && (best === null || st.objective < best.stats.objective - TOLERANCE || (Math.abs(st.objective - best.stats.objective) <= TOLERANCE && z < best.z))) {
      best = { z, members: membersOf(z, n), stats: st };
    }
  }
  const circuit = summarizeCircuit(run.circuit, problem.options?.include_qasm);
  if (circuit.qasm === null) {
    circuit.qasm_unavailable = `the cost layer is a precomputed diagonal; its exact gate form (Walsh expansion, up to n·2ⁿ gates) is built up to ${WALSH_MAX_QUBITS} qubits, and this circuit has ${n}`;
  }
  const round6 = (x: number): number => Number(x.toPrecision(6));
  const extra = {
    qubits: n,
    circuit,
    quantum: quantumEvidence(run.state, optimal),
    feasible_shots: [...run.counts].filter(([z]) => scored.get(z)!.feasible).reduce((s, [, c]) => s + c, 0),
    qaoa: {
      layers: QAOA_LAYERS,
      gammas: run.gammas.map(round6),
      betas: run.betas.map(round6),
      angles: sub ? `transferred: optimised on a ${TRANSFER_ASSETS}-asset sub-instance (max_assets ${sub.maxAssets}), then run once at ${n} qubits` : 'optimised on this instance',
      optimised_on_qubits: sub ? TRANSFER_ASSETS : n,
      optimiser_evaluations: (tuned ?? run).evaluations,
    },
    ...countsFields(problem.options, (limit) => measurementCounts(run.counts, n, limit, new Set(optimal), (z) => ({ selected: membersOf(z, n).map((i) => assets[i]!.id), feasible: scored.get(z)!.feasible }))),
  };
  const meta = { shots: ctx.shots, optimal_count: best === null ? 0 : run.counts.get(best.z)!, energy: run.energy, depth: circuit.depth };
  if (best === null) {
    // A feasible selection exists (the enumeration found it) but no shot measured one: answer
    // with the enumerated optimum, labelled as such.
    return answer('exhaustive_search', exact!, { ...extra, reason_classical: 'QAOA measured no feasible selection' }, { ...meta, optimal_count: 0 });
  }
  return answer('qaoa', best, extra, meta);
}
