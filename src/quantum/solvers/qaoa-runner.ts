import { Circuit, type GateOp } from '../simulator/circuit.ts';
import { isingDiagonal, type LinearTerm, type QuadraticTerm } from '../simulator/diagonals.ts';
import { expectationDiagonal, sampleCounts } from '../simulator/measure.ts';
import { assertFits } from '../simulator/memory-guard.ts';
import { prepareDiagonal } from '../simulator/prepared-diagonal.ts';
import { qaoaExpectation, qaoaState } from '../simulator/qaoa.ts';
import type { Rng } from '../simulator/rng.ts';
import type { StateVector } from '../simulator/state-vector.ts';
import { nelderMead } from './nelder-mead.ts';

/** An Ising cost C(s) = constant + Σ h_i s_i + Σ w_ij s_i s_j, s_i = 1 - 2·bit_i. */
export interface IsingModel {
  quadratic: QuadraticTerm[];
  linear: LinearTerm[];
  constant: number;
}

/**
 * Rewrites the QUBO xᵀQx + offset (x_i = bit i, Q n×n row-major, any symmetry) as an Ising
 * model, using x_i = (1 - s_i)/2; the two agree on every bitstring.
 */
export function quboToIsing(n: number, q: Float64Array, offset = 0): IsingModel {
  const h = new Float64Array(n);
  let constant = offset;
  const quadratic: QuadraticTerm[] = [];
  for (let i = 0; i < n; i++) {
    const d = q[i * n + i]!;
    constant += d / 2;
    h[i] = h[i]! - d / 2;
    for (let j = i + 1; j < n; j++) {
      const c = q[i * n + j]! + q[j * n + i]!;
      if (c === 0) continue;
      constant += c / 4;
      h[i] = h[i]! - c / 4;
      h[j] = h[j]! - c / 4;
      quadratic.push({ i, j, w: c / 4 });
    }
  }
  const linear: LinearTerm[] = [];
  h.forEach((v, i) => {
    if (v !== 0) linear.push({ i, h: v });
  });
  return { quadratic, linear, constant };
}

/**
 * QAOA on an Ising cost: |+⟩ⁿ, then p layers of exp(-iγC)·exp(-iβΣX), angles optimised
 * classically (Nelder–Mead on ⟨C⟩ from the exact state vector, from the best of three
 * linear-ramp starts), then `shots` measurements of the optimised state. The optimiser sees
 * the cost standardised to mean 0 and standard deviation 1 over all bitstrings, so one angle
 * range suits kilometres and returns alike; the circuit that runs (and is exported) is that
 * standardised cost layer, and the reported energy is ⟨C⟩ in the problem's own units.
 */
export interface QaoaOptions {
  layers?: number;
  shots: number;
  rng: Rng;
  maxEvaluations?: number;
  threads?: number | undefined;
  /** Counts from elsewhere (the hardware substrate) for the final circuit, instead of sampling the state. */
  sample?: ((circuit: Circuit) => Map<number, number>) | undefined;
  /** Skip the optimiser and run these angles (tests: γ = β = 0 must give no amplification). */
  fixedAngles?: { gammas: number[]; betas: number[] };
}

/**
 * The cost QAOA minimises: an Ising model (exported as RZ/RZZ gates), or any precomputed
 * diagonal — the exact cost of every bitstring — which the simulator applies the same way but
 * which has no gate decomposition (the circuit keeps it as one labelled diagonal layer).
 */
export type QaoaCost = IsingModel | { diagonal: Float64Array; label?: string };

/**
 * What the quantum part contributed: the probability that the final QAOA state (exact, from
 * the state vector) measures one of `optimal` bitstrings, next to the probability uniform
 * random guessing gives them (|optimal|/2^n). amplification = p_optimal / p_uniform.
 */
export interface QuantumEvidence {
  p_optimal: number;
  p_uniform: number;
  amplification: number;
  optimal_states: number;
}

export function quantumEvidence(state: StateVector, optimal: Iterable<number>): QuantumEvidence {
  let p = 0;
  let count = 0;
  for (const z of new Set(optimal)) {
    p += state.re[z]! ** 2 + state.im[z]! ** 2;
    count++;
  }
  const pUniform = count / state.re.length;
  const round = (x: number): number => Number(x.toPrecision(6));
  return { p_optimal: round(p), p_uniform: round(pUniform), amplification: pUniform > 0 ? round(p / pUniform) : 0, optimal_states: count };
}

/** Diagonals up to this many qubits get an exact gate form (Walsh expansion) for QASM export. */
export const WALSH_MAX_QUBITS = 10;

/**
 * The exact gate form of e^{-iγ·diag}: diag = Σ_S c_S·Z_S (Walsh–Hadamard expansion, S a set of
 * qubits), each term e^{-iγ c_S Z_S} as a CX parity ladder onto S's last qubit, RZ(2γc_S), and
 * the ladder undone; c_∅ is the global phase −γ·c_∅. O(n·2ⁿ) to expand, up to n·2ⁿ gates.
 */
export function walshGateForm(qubits: number, diag: Float64Array, gamma: number): { gates: GateOp[]; globalPhase: number } {
  const c = Float64Array.from(diag);
  for (let h = 1; h < c.length; h <<= 1) {
    for (let i = 0; i < c.length; i += h << 1) {
      for (let j = i; j < i + h; j++) {
        const a = c[j]!;
        const b = c[j + h]!;
        c[j] = a + b;
        c[j + h] = a - b;
      }
    }
  }
  let largest = 0;
  for (let i = 0; i < c.length; i++) {
    c[i] = c[i]! / c.length;
    largest = Math.max(largest, Math.abs(c[i]!));
  }
  const gates: GateOp[] = [];
  for (let set = 1; set < c.length; set++) {
    const coefficient = c[set]!;
    if (Math.abs(coefficient) <= 1e-14 * largest) continue;
    const members = [...Array(qubits).keys()].filter((q) => (set >> q) & 1);
    const ladder: GateOp[] = [];
    for (let k = 0; k + 1 < members.length; k++) ladder.push({ kind: 'gate', name: 'cx', qubits: [members[k]!, members[k + 1]!], params: [] });
    gates.push(...ladder, { kind: 'gate', name: 'rz', qubits: [members[members.length - 1]!], params: [2 * gamma * coefficient] }, ...ladder.slice().reverse());
  }
  return { gates, globalPhase: -gamma * c[0]! };
}

export interface QaoaRun {
  qubits: number;
  /** The cost of every bitstring, in the problem's units. */
  diag: Float64Array;
  gammas: number[];
  betas: number[];
  /** ⟨C⟩ of the optimised state, in the cost's units. */
  energy: number;
  counts: Map<number, number>;
  circuit: Circuit;
  evaluations: number;
  /** The final (optimised) state the shots were sampled from. */
  state: StateVector;
}

export function runQaoa(qubits: number, cost: QaoaCost, options: QaoaOptions): QaoaRun {
  // the state, the cost diagonal and its standardised copy
  assertFits(qubits, 2);
  const layers = options.fixedAngles?.gammas.length ?? options.layers ?? 2;
  const model: IsingModel | undefined = 'diagonal' in cost ? undefined : cost;
  const diag = model === undefined ? (cost as { diagonal: Float64Array }).diagonal : isingDiagonal(qubits, model.quadratic, model.linear, model.constant);
  if (diag.length !== 2 ** qubits) throw new RangeError(`cost diagonal length ${diag.length} != ${2 ** qubits}`);
  let mean = 0;
  for (const v of diag) mean += v;
  mean /= diag.length;
  let variance = 0;
  for (const v of diag) variance += (v - mean) ** 2;
  const std = Math.sqrt(variance / diag.length) || 1;
  const scaledModel: IsingModel | undefined =
    model === undefined
      ? undefined
      : {
          quadratic: model.quadratic.map((t) => ({ i: t.i, j: t.j, w: t.w / std })),
          linear: model.linear.map((t) => ({ i: t.i, h: t.h / std })),
          constant: (model.constant - mean) / std,
        };
  const scaled = new Float64Array(diag.length);
  for (let i = 0; i < diag.length; i++) scaled[i] = (diag[i]! - mean) / std;
  const prepared = prepareDiagonal(scaled);
  const simOptions = options.threads === undefined ? {} : { threads: options.threads };
  const objective = (angles: readonly number[]): number =>
    qaoaExpectation(qubits, prepared, angles.slice(0, layers), angles.slice(layers), simOptions);

  let evaluations = 0;
  let angles: number[];
  if (options.fixedAngles !== undefined) {
    angles = [...options.fixedAngles.gammas, ...options.fixedAngles.betas];
  } else {
    let best: { x: number[]; v: number } | undefined;
    for (const dt of [0.4, 0.8, 1.2]) {
      const x: number[] = [];
      for (let k = 0; k < layers; k++) x.push(((k + 0.5) / layers) * dt);
      for (let k = 0; k < layers; k++) x.push((1 - (k + 0.5) / layers) * dt);
      const v = objective(x);
      evaluations++;
      if (best === undefined || v < best.v) best = { x, v };
    }
    const refined = nelderMead(objective, best!.x, { step: 0.15, maxEvaluations: options.maxEvaluations ?? 120 });
    evaluations += refined.evaluations;
    angles = refined.value < best!.v ? refined.x : best!.x;
  }
  const gammas = angles.slice(0, layers);
  const betas = angles.slice(layers);

  const circuit = new Circuit(qubits);
  for (let q = 0; q < qubits; q++) circuit.h(q);
  for (let k = 0; k < layers; k++) {
    if (scaledModel === undefined) {
      const label = (cost as { label?: string }).label ?? 'cost';
      circuit.diagonal(scaled, gammas[k]!, label, qubits <= WALSH_MAX_QUBITS ? walshGateForm(qubits, scaled, gammas[k]!) : undefined);
    }
    else circuit.costLayer(scaledModel.quadratic, scaledModel.linear, gammas[k]!, scaledModel.constant, 'cost', scaled);
    circuit.mixerX(betas[k]!);
  }
  circuit.measureAll();

  const state = qaoaState(qubits, prepared, gammas, betas, simOptions);
  const energy = expectationDiagonal(state, diag);
  const counts = options.sample?.(circuit) ?? sampleCounts(state, options.shots, options.rng);
  return { qubits, diag, gammas, betas, energy, counts, circuit, evaluations, state };
}
