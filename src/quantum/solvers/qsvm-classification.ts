import { Circuit } from '../simulator/circuit.ts';
import { assertFits } from '../simulator/memory-guard.ts';
import type { Rng } from '../simulator/rng.ts';
import { isingDiagonal } from '../simulator/diagonals.ts';
import { StateVector } from '../simulator/state-vector.ts';
import type { ClassificationProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { countsFields } from './measurement-counts.ts';
import { problemTooLarge } from './problem-too-large.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * qsvm / classification: a quantum-kernel SVM.
 * - Features are standardised with the training data's statistics (mean 0, standard deviation 1
 *   per feature; predict points with the same map), then multiplied by a kernel scale s, and
 *   encoded by the ZZ feature map (Havlíček et al. 2019; Qiskit's ZZFeatureMap, 2 repetitions,
 *   full entanglement): per repetition H on every qubit, RZ(2·x_i), then RZZ(2·(π-x_i)(π-x_j))
 *   for every pair. One qubit per feature.
 * - s sets the kernel's bandwidth: the pair terms make the feature map's phases grow with the
 *   number of features, so one fixed range suits no data set (min–max scaling to [0, 1] rad left
 *   two clusters nine spreads apart at 0.86 accuracy with 32 of 40 points as support vectors).
 *   s is chosen by stratified k-fold cross-validation on the training set over SCALE_GRID (as
 *   many candidates as the request's kernel budget allows; with one, DEFAULT_SCALE), and the
 *   cross-validated accuracy of the chosen kernel is reported beside the training accuracy.
 * - Kernel K(x, y) = |⟨φ(x)|φ(y)⟩|², the probability that the compute–uncompute circuit
 *   U(y)†U(x) returns |0…0⟩; each entry is estimated from `shots` measurements (binomial shot
 *   noise on the exact fidelity; a normal approximation when shots·K·(1-K) > 25). K(x, x) = 1.
 *   The states are simulated as what the gates do: each repetition is H on every qubit and one
 *   diagonal phase pass (the RZ and RZZ phases summed per basis state), exactly equal to running
 *   the gates one by one (tests check), n + 1 passes per repetition instead of n(n+3)/2.
 * - A soft-margin SVM (C = 10) is trained on that kernel by SMO; several labels → one-vs-rest.
 * - `confidence` is the softmax of the one-vs-rest decision values (a score, not a calibrated
 *   probability).
 */

/** One qubit per feature; beyond, 422 problem_too_large (memory and kernel budgets bind first at the top). */
export const QSVM_MAX_QUBITS = 20;
/** Bytes of training states kept in memory at once. */
const TRAINING_STATE_BUDGET = 1024 ** 3;
/** Amplitude operations allowed for the kernel (states and overlaps, every candidate scale) in one request. */
const KERNEL_WORK_BUDGET = 16e9;
const C = 10;
/**
 * Kernel scales tried by cross-validation, as multiples of scaleUnit(n). Log-spaced: a small
 * scale is a wide kernel (nearly linear), a large one a narrow kernel (each point its own class).
 */
export const SCALE_GRID = [0.25, 0.5, 1, 2, 4] as const;
/** The multiple used when the budget allows only one kernel. */
export const DEFAULT_SCALE = 1;

/**
 * The unit of the kernel scale for n features. A change δ in one standardised feature moves the
 * feature map's phases by about δ·(1 + π·√(n-1)) (its RZ term and its n-1 pair terms, of random
 * sign across basis states), and two points differ in n features (distance ∝ √n): this unit
 * keeps the kernel's width about the same relative to the data's spread, whatever n.
 */
export function scaleUnit(n: number): number {
  return 1 / (Math.sqrt(n) * (1 + Math.PI * Math.sqrt(Math.max(0, n - 1))));
}
/** Folds of the cross-validation (fewer when there are fewer training points). */
const FOLDS = 5;

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

/**
 * The ZZ feature map's diagonal: the phase φ(z) that one repetition's RZ and RZZ gates put on
 * basis state z, e^{-iφ(z)} with φ(z) = Σ x_i s_i + Σ_{i<j} (π-x_i)(π-x_j) s_i s_j, s = 1 - 2·bit.
 */
function zzPhases(x: readonly number[]): Float64Array {
  const n = x.length;
  const quadratic = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) quadratic.push({ i, j, w: (Math.PI - x[i]!) * (Math.PI - x[j]!) });
  return isingDiagonal(n, quadratic, x.map((h, i) => ({ i, h })));
}

/**
 * zzFeatureMap(x) run on |0…0⟩, pass by pass: the first H layer on |0…0⟩ is the uniform state,
 * so repetition one is a single phase pass; each further one is a Walsh–Hadamard transform (H on
 * every qubit, n butterfly passes on real arrays) and the phase pass. The result equals running
 * the gates one by one (tested), at about n + 2 passes instead of n(n+3)/2 per repetition.
 */
export function zzFeatureState(x: readonly number[], reps = 2): StateVector {
  const n = x.length;
  const phases = zzPhases(x);
  const size = phases.length;
  const s = StateVector.allocate(n);
  const { re, im } = s;
  // e^{-iφ}: cosines and sines kept (in place of the phases) for the later repetitions
  const cos = phases;
  const sin = new Float64Array(size);
  const norm = 1 / Math.sqrt(size);
  for (let z = 0; z < size; z++) {
    const c = Math.cos(phases[z]!);
    const sn = Math.sin(phases[z]!);
    cos[z] = c;
    sin[z] = sn;
    re[z] = c * norm;
    im[z] = -sn * norm;
  }
  for (let r = 1; r < reps; r++) {
    for (let h = 1; h < size; h <<= 1) {
      for (let i = 0; i < size; i += h << 1) {
        for (let j = i; j < i + h; j++) {
          const ar = re[j]!;
          const ai = im[j]!;
          const br = re[j + h]!;
          const bi = im[j + h]!;
          re[j] = ar + br;
          im[j] = ai + bi;
          re[j + h] = ar - br;
          im[j + h] = ai - bi;
        }
      }
    }
    for (let z = 0; z < size; z++) {
      const c = cos[z]! * norm;
      const sn = sin[z]! * norm;
      const xr = re[z]!;
      const xi = im[z]!;
      re[z] = c * xr + sn * xi;
      im[z] = c * xi - sn * xr;
    }
  }
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

/** Stratified folds: each label's points, shuffled, dealt round-robin so every fold gets its share. */
function stratifiedFolds(labels: readonly string[], folds: number, rng: Rng): Int32Array {
  const fold = new Int32Array(labels.length);
  const byLabel = new Map<string, number[]>();
  labels.forEach((label, i) => byLabel.set(label, [...(byLabel.get(label) ?? []), i]));
  let next = 0;
  for (const members of [...byLabel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, m]) => m)) {
    for (let i = members.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    for (const i of members) fold[i] = next++ % folds;
  }
  return fold;
}

interface Classifier {
  labels: string[];
  models: { label: string; y: Int8Array; alpha: Float64Array; b: number; objective: number }[];
  /** Training points the models use (rows of the kernel), in kernel-row order. */
  rows: number[];
}

/** One SVM (two labels) or one per label (one-vs-rest), on the training points `rows` of `kernel`. */
function trainClassifier(kernel: Float64Array[], labelOf: readonly string[], rows: number[]): Classifier {
  const labels = [...new Set(labelOf)].sort();
  const sub = rows.map((a) => Float64Array.from(rows, (b) => kernel[a]![b]!));
  // two labels: one classifier (positive = labels[0]); more: one-vs-rest
  const positives = labels.length === 2 ? [labels[0]!] : labels;
  const models = positives.map((label) => {
    const y = Int8Array.from(rows, (t) => (labelOf[t] === label ? 1 : -1));
    return { label, y, ...trainSvm(sub, y) };
  });
  return { labels, models, rows };
}

/** Decision values per label for a point whose kernel row against the classifier's rows is `row(t)`. */
function decide(c: Classifier, row: (t: number) => number): { label: string; confidence: number; margin: number[] } {
  const f = c.models.map((mod) => {
    let s = mod.b;
    for (let k = 0; k < c.rows.length; k++) if (mod.alpha[k]! > 0) s += mod.alpha[k]! * mod.y[k]! * row(c.rows[k]!);
    return s;
  });
  const values = c.labels.length === 2 ? [f[0]!, -f[0]!] : f;
  const top = Math.max(...values);
  const exp = values.map((v) => Math.exp(v - top));
  const total = exp.reduce((s, v) => s + v, 0);
  const best = values.indexOf(top);
  return { label: c.labels[best]!, confidence: exp[best]! / total, margin: values };
}

/**
 * k-fold cross-validation on a training kernel: accuracy on the held-out folds, and their mean
 * hinge loss (which breaks ties between scales of equal accuracy: the wider margin wins).
 */
function crossValidate(kernel: Float64Array[], labelOf: readonly string[], fold: Int32Array, folds: number): { accuracy: number; hinge: number } {
  let correct = 0;
  let hinge = 0;
  const all = [...labelOf.keys()];
  for (let k = 0; k < folds; k++) {
    const held = all.filter((t) => fold[t] === k);
    const rest = all.filter((t) => fold[t] !== k);
    if (held.length === 0 || rest.length === 0) continue;
    const c = trainClassifier(kernel, labelOf, rest);
    for (const t of held) {
      const d = decide(c, (u) => kernel[t]![u]!);
      if (d.label === labelOf[t]) correct++;
      const at = c.labels.indexOf(labelOf[t]!);
      // a label the training folds lacked cannot be predicted: the full loss
      hinge += at < 0 ? 2 : Math.max(0, 1 - (d.margin[at]! - Math.max(...d.margin.filter((_, i) => i !== at))) / 2);
    }
  }
  return { accuracy: correct / labelOf.length, hinge: hinge / labelOf.length };
}

export function solveClassification(problem: ClassificationProblem, ctx: SolverContext): SolverOutput {
  const train = problem.training_data;
  const n = train[0]!.features.length;
  if (n > QSVM_MAX_QUBITS) {
    assertFits(n); // the simulator's own refusal when it could not hold even one state
    throw problemTooLarge(`qsvm encodes one feature per qubit; ${n} features exceed the QSVM ceiling of ${QSVM_MAX_QUBITS} qubits`, 'problem.training_data.0.features');
  }
  const m = train.length;
  const p = problem.predict.length;
  if (m * 2 ** n * 16 > TRAINING_STATE_BUDGET) {
    throw problemTooLarge(`${m} training points of ${n} qubits need more than ${TRAINING_STATE_BUDGET / 1024 ** 2} MiB of states`, 'problem.training_data');
  }
  assertFits(n, m + 2);
  // Amplitude operations: a state costs about (n + 4)·2 passes, an overlap one pass (8 flops per amplitude).
  const stateWork = 2 ** n * 8 * (2 * (n + 4));
  const trainWork = ((m * (m - 1)) / 2) * 2 ** n * 8 + m * stateWork;
  const predictWork = m * p * 2 ** n * 8 + p * stateWork;
  const affordable = Math.floor((KERNEL_WORK_BUDGET - predictWork) / trainWork);
  if (affordable < 1) {
    throw problemTooLarge(
      `${m} training and ${p} predict points on ${n} qubits need about ${(trainWork + predictWork).toExponential(1)} simulated amplitude operations, over this service's per-request budget of ${KERNEL_WORK_BUDGET.toExponential(0)}; send fewer points or features`,
      'problem',
    );
  }
  // Standardise on the training data (a constant feature stays 0).
  const mean = Array.from({ length: n }, (_, f) => train.reduce((s, d) => s + d.features[f]!, 0) / m);
  const std = Array.from({ length: n }, (_, f) => Math.sqrt(train.reduce((s, d) => s + (d.features[f]! - mean[f]!) ** 2, 0) / m) || 1);
  const unit = scaleUnit(n);
  const scaled = (x: readonly number[], scale: number): number[] => x.map((v, f) => ((v - mean[f]!) / std[f]!) * scale * unit);
  const labelOf = train.map((d) => d.label);

  const trainingKernel = (scale: number): { states: StateVector[]; kernel: Float64Array[] } => {
    const states = train.map((d) => zzFeatureState(scaled(d.features, scale)));
    const kernel = Array.from({ length: m }, () => new Float64Array(m));
    for (let a = 0; a < m; a++) {
      kernel[a]![a] = 1;
      for (let b = a + 1; b < m; b++) {
        const k = measuredFraction(fidelity(states[a]!, states[b]!), ctx.shots, ctx.rng);
        kernel[a]![b] = k;
        kernel[b]![a] = k;
      }
    }
    return { states, kernel };
  };

  // Cross-validation over the scales the budget allows: those nearest the default when it cannot take them all.
  const folds = Math.min(FOLDS, m);
  const fold = stratifiedFolds(labelOf, folds, ctx.rng);
  const nearestFirst = [...SCALE_GRID].sort((a, b) => Math.abs(Math.log(a / DEFAULT_SCALE)) - Math.abs(Math.log(b / DEFAULT_SCALE)) || a - b);
  const candidates = nearestFirst.slice(0, affordable).sort((a, b) => a - b);
  let chosen: { scale: number; states: StateVector[]; kernel: Float64Array[]; accuracy: number; hinge: number } | undefined;
  const tried: { kernel_scale: number; cross_validated_accuracy: number }[] = [];
  for (const scale of candidates) {
    const { states, kernel } = trainingKernel(scale);
    const cv = crossValidate(kernel, labelOf, fold, folds);
    tried.push({ kernel_scale: scale, cross_validated_accuracy: cv.accuracy });
    if (chosen === undefined || cv.accuracy > chosen.accuracy || (cv.accuracy === chosen.accuracy && cv.hinge < chosen.hinge)) {
      chosen = { scale, states, kernel, ...cv };
    }
  }
  const { scale, states: trainStates, kernel } = chosen!;
  const classifier = trainClassifier(kernel, labelOf, [...labelOf.keys()]);
  const { labels, models } = classifier;
  const trainingAccuracy = kernel.filter((row, t) => decide(classifier, (u) => row[u]!).label === labelOf[t]).length / m;
  const predictions = problem.predict.map((q) => {
    const s = zzFeatureState(scaled(q.features, scale));
    const row = Float64Array.from(trainStates, (t) => measuredFraction(fidelity(s, t), ctx.shots, ctx.rng));
    const { label, confidence } = decide(classifier, (u) => row[u]!);
    return { label, confidence };
  });
  // the circuit that estimates one kernel entry: U(x), then U(y)† (here shown for the first two training points)
  const x0 = scaled(train[0]!.features, scale);
  const x1 = scaled(train[1]!.features, scale);
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
  // each kernel entry is one circuit sampled meta.shots times; every candidate scale's training kernel ran
  const circuits = (candidates.length * (m * (m - 1))) / 2 + m * p;
  return {
    solution: {
      method: 'qsvm_zz_kernel',
      predictions,
      labels,
      training_accuracy: trainingAccuracy,
      cross_validated_accuracy: chosen!.accuracy,
      cross_validation: {
        folds,
        stratified: true,
        selected_scale: scale,
        selected_by: candidates.length > 1 ? 'cross_validation' : `default (the kernel budget allows one scale for ${m} points on ${n} qubits)`,
        candidates: tried,
      },
      feature_scaling: { method: 'standardise', statistics: 'training_data', kernel_scale: scale, radians_per_standard_deviation: Number((scale * unit).toPrecision(6)) },
      support_vectors: models.map((mod) => ({ label: mod.label, count: mod.alpha.filter((a) => a > 1e-9).length })),
      qubits: n,
      kernel_evaluations: circuits,
      circuits_run: circuits,
      total_shots: circuits * ctx.shots,
      circuit: summary,
      ...countsFields(problem.options, () => 'each kernel entry is its own circuit, one ancilla measured: no single histogram'),
    },
    meta: {
      shots: ctx.shots,
      optimal_count: 0,
      energy: models.reduce((s, mod) => s + mod.objective, 0) / models.length,
      depth: summary.depth,
    },
  };
}
