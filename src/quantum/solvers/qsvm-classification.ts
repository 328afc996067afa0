import { Circuit } from '../simulator/circuit.ts';
import { assertFits } from '../simulator/memory-guard.ts';
import type { Rng } from '../simulator/rng.ts';
import { StateVector } from '../simulator/state-vector.ts';
import type { ClassificationProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { problemTooLarge } from './problem-too-large.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * qsvm / classification: a quantum-kernel SVM.
 * - Features are min–max scaled on the training data to [0, FEATURE_RANGE] (predict points with
 *   the same map) and encoded by the ZZ feature map (Havlíček et al. 2019; Qiskit's
 *   ZZFeatureMap, 2 repetitions, full entanglement): per repetition H on every qubit, RZ(2·x_i),
 *   then RZZ(2·(π-x_i)(π-x_j)) for every pair. One qubit per feature.
 * - Kernel K(x, y) = |⟨φ(x)|φ(y)⟩|², the probability that the compute–uncompute circuit
 *   U(y)†U(x) returns |0…0⟩; each entry is estimated from `shots` measurements (binomial shot
 *   noise on the exact fidelity; a normal approximation when shots·K·(1-K) > 25). K(x, x) = 1.
 * - A soft-margin SVM (C = 10) is trained on that kernel by SMO; several labels → one-vs-rest.
 * - `confidence` is the softmax of the one-vs-rest decision values (a score, not a calibrated
 *   probability).
 */

export const QSVM_MAX_QUBITS = 16;
/** Bytes of training states kept in memory at once. */
const TRAINING_STATE_BUDGET = 512 * 1024 ** 2;
/** Scaled features span [0, 1] rad: wider ranges make the ZZ kernel too narrow to generalise (measured on blobs). */
const FEATURE_RANGE = 1;
/** Amplitude operations allowed for the kernel (states and overlaps) in one request. */
const KERNEL_WORK_BUDGET = 4e9;
const C = 10;

export function zzFeatureMap(x: readonly number[], reps = 2): Circuit {
  const n = x.length;
  const c = new Circuit(n);
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < n; i++) c.h(i);
    for (let i = 0; i < n; i++) c.rz(i, 2 * x[i]!);
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) c.rzz(i, j, 2 * (Math.PI - x[i]!) * (Math.PI - x[j]!));
  }
  return c;
}

function featureState(x: readonly number[]): StateVector {
  const s = StateVector.zero(x.length);
  zzFeatureMap(x).run(s);
  return s;
}

function fidelity(a: StateVector, b: StateVector): number {
  let r = 0;
  let i = 0;
  for (let z = 0; z < a.re.length; z++) {
    r += a.re[z]! * b.re[z]! + a.im[z]! * b.im[z]!;
    i += a.re[z]! * b.im[z]! - a.im[z]! * b.re[z]!;
  }
  return Math.min(1, r * r + i * i);
}

/** A Binomial(shots, p) draw divided by shots: the fraction of shots that measured |0…0⟩. */
export function measuredFraction(p: number, shots: number, rng: Rng): number {
  const variance = shots * p * (1 - p);
  if (variance > 25) {
    // Box–Muller normal approximation
    const u = Math.max(rng.next(), Number.MIN_VALUE);
    const g = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
    return Math.min(shots, Math.max(0, Math.round(shots * p + g * Math.sqrt(variance)))) / shots;
  }
  // inversion on the rarer outcome: expected steps ≈ shots·min(p, 1-p) + 1
  const flip = p > 0.5;
  const q = flip ? 1 - p : p;
  if (q <= 0) return flip ? 1 : 0;
  let k = 0;
  let prob = (1 - q) ** shots;
  let cdf = prob;
  const u = rng.next();
  while (u > cdf && k < shots) {
    prob *= ((shots - k) / (k + 1)) * (q / (1 - q));
    k++;
    cdf += prob;
  }
  return (flip ? shots - k : k) / shots;
}

/** SMO (Platt 1998, with the maximal-violating-pair selection of LIBSVM) on a precomputed kernel. */
export function trainSvm(kernel: Float64Array[], y: Int8Array, c = C, tolerance = 1e-3, maxIterations = 100_000): { alpha: Float64Array; b: number; objective: number } {
  const m = y.length;
  const alpha = new Float64Array(m);
  const grad = new Float64Array(m).fill(-1); // ∇W = Qα - 1 with Q_ij = y_i y_j K_ij
  for (let iter = 0; iter < maxIterations; iter++) {
    let i = -1;
    let gMax = -Infinity;
    let j = -1;
    let gMin = Infinity;
    for (let t = 0; t < m; t++) {
      const yt = y[t]!;
      const v = -yt * grad[t]!;
      if ((yt === 1 && alpha[t]! < c) || (yt === -1 && alpha[t]! > 0)) {
        if (v > gMax) {
          gMax = v;
          i = t;
        }
      }
      if ((yt === 1 && alpha[t]! > 0) || (yt === -1 && alpha[t]! < c)) {
        if (v < gMin) {
          gMin = v;
          j = t;
        }
      }
    }
    if (i < 0 || j < 0 || gMax - gMin < tolerance) break;
    const ki = kernel[i]!;
    const kj = kernel[j]!;
    const eta = Math.max(1e-12, ki[i]! + kj[j]! - 2 * ki[j]!);
    // step along y_i·e_i - y_j·e_j, clipped to the box
    let step = (gMax - gMin) / eta;
    const yi = y[i]!;
    const yj = y[j]!;
    step = Math.min(step, yi === 1 ? c - alpha[i]! : alpha[i]!, yj === 1 ? alpha[j]! : c - alpha[j]!);
    alpha[i] = alpha[i]! + yi * step;
    alpha[j] = alpha[j]! - yj * step;
    for (let t = 0; t < m; t++) grad[t] = grad[t]! + y[t]! * step * (ki[t]! - kj[t]!);
  }
  // bias from the free support vectors (mean), else the midpoint of the bounds
  let sum = 0;
  let free = 0;
  let upper = Infinity;
  let lower = -Infinity;
  for (let t = 0; t < m; t++) {
    const v = -y[t]! * grad[t]!;
    if (alpha[t]! > 1e-9 && alpha[t]! < c - 1e-9) {
      sum += v;
      free++;
    } else if ((y[t] === 1) !== (alpha[t]! <= 1e-9)) upper = Math.min(upper, v);
    else lower = Math.max(lower, v);
  }
  const b = free > 0 ? sum / free : Number.isFinite(upper) && Number.isFinite(lower) ? (upper + lower) / 2 : 0;
  let objective = 0;
  for (let t = 0; t < m; t++) objective += 0.5 * alpha[t]! * (grad[t]! - 1);
  return { alpha, b, objective };
}

export function solveClassification(problem: ClassificationProblem, ctx: SolverContext): SolverOutput {
  const train = problem.training_data;
  const n = train[0]!.features.length;
  if (n > QSVM_MAX_QUBITS) {
    assertFits(n); // the simulator's own refusal when it could not hold even one state
    throw problemTooLarge(`qsvm encodes one feature per qubit; ${n} features exceed the QSVM ceiling of ${QSVM_MAX_QUBITS} qubits`, 'problem.training_data.0.features');
  }
  if (train.length * 2 ** n * 16 > TRAINING_STATE_BUDGET) {
    throw problemTooLarge(`${train.length} training points of ${n} qubits need more than ${TRAINING_STATE_BUDGET / 1024 ** 2} MiB of states`, 'problem.training_data');
  }
  const kernelWork = ((train.length * (train.length - 1)) / 2 + train.length * problem.predict.length) * 2 ** n * 8;
  if (kernelWork > KERNEL_WORK_BUDGET) {
    throw problemTooLarge(
      `${train.length} training and ${problem.predict.length} predict points on ${n} qubits need about ${kernelWork.toExponential(1)} simulated amplitude operations, over this service's per-request budget of ${KERNEL_WORK_BUDGET.toExponential(0)}; send fewer points or features`,
      'problem',
    );
  }
  const lo = Array.from({ length: n }, (_, f) => Math.min(...train.map((d) => d.features[f]!)));
  const hi = Array.from({ length: n }, (_, f) => Math.max(...train.map((d) => d.features[f]!)));
  const scale = (x: readonly number[]): number[] => x.map((v, f) => ((v - lo[f]!) / (hi[f]! - lo[f]! || 1)) * FEATURE_RANGE);
  const trainStates = train.map((d) => featureState(scale(d.features)));
  const m = train.length;
  const kernel = Array.from({ length: m }, () => new Float64Array(m));
  for (let a = 0; a < m; a++) {
    kernel[a]![a] = 1;
    for (let b = a + 1; b < m; b++) {
      const k = measuredFraction(fidelity(trainStates[a]!, trainStates[b]!), ctx.shots, ctx.rng);
      kernel[a]![b] = k;
      kernel[b]![a] = k;
    }
  }
  const labels = [...new Set(train.map((d) => d.label))].sort();
  // two labels: one classifier (positive = labels[0]); more: one-vs-rest
  const positives = labels.length === 2 ? [labels[0]!] : labels;
  const models = positives.map((label) => {
    const y = Int8Array.from(train, (d) => (d.label === label ? 1 : -1));
    return { label, y, ...trainSvm(kernel, y) };
  });
  const decisions = (row: Float64Array): number[] => {
    const f = models.map((mod) => {
      let s = mod.b;
      for (let t = 0; t < m; t++) if (mod.alpha[t]! > 0) s += mod.alpha[t]! * mod.y[t]! * row[t]!;
      return s;
    });
    return labels.length === 2 ? [f[0]!, -f[0]!] : f;
  };
  const classify = (row: Float64Array): { label: string; confidence: number } => {
    const f = decisions(row);
    const top = Math.max(...f);
    const exp = f.map((v) => Math.exp(v - top));
    const total = exp.reduce((s, v) => s + v, 0);
    const best = f.indexOf(top);
    return { label: labels[best]!, confidence: exp[best]! / total };
  };
  const trainingAccuracy = kernel.filter((row, t) => classify(row).label === train[t]!.label).length / m;
  const predictions = problem.predict.map((p) => {
    const s = featureState(scale(p.features));
    const row = Float64Array.from(trainStates, (t) => measuredFraction(fidelity(s, t), ctx.shots, ctx.rng));
    return classify(row);
  });
  // the circuit that estimates one kernel entry: U(x), then U(y)† (here shown for the first two training points)
  const x0 = scale(train[0]!.features);
  const x1 = scale(train[1]!.features);
  const circuit = zzFeatureMap(x0);
  const inverse = zzFeatureMap(x1).ops.slice().reverse();
  for (const op of inverse) {
    if (op.kind !== 'gate') continue;
    if (op.name === 'h') circuit.h(op.qubits[0]!);
    else if (op.name === 'rz') circuit.rz(op.qubits[0]!, -op.params[0]!);
    else if (op.name === 'rzz') circuit.rzz(op.qubits[0]!, op.qubits[1]!, -op.params[0]!);
  }
  circuit.measureAll();
  const summary = summarizeCircuit(circuit, problem.options?.include_qasm);
  return {
    solution: {
      method: 'qsvm_zz_kernel',
      predictions,
      labels,
      training_accuracy: trainingAccuracy,
      support_vectors: models.map((mod) => ({ label: mod.label, count: mod.alpha.filter((a) => a > 1e-9).length })),
      qubits: n,
      kernel_evaluations: (m * (m - 1)) / 2 + m * problem.predict.length,
      // each kernel entry is one circuit sampled meta.shots times
      circuits_run: (m * (m - 1)) / 2 + m * problem.predict.length,
      total_shots: ((m * (m - 1)) / 2 + m * problem.predict.length) * ctx.shots,
      circuit: summary,
    },
    meta: {
      shots: ctx.shots,
      optimal_count: 0,
      energy: models.reduce((s, mod) => s + mod.objective, 0) / models.length,
      depth: summary.depth,
    },
  };
}
