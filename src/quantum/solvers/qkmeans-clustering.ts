import { Circuit } from '../simulator/circuit.ts';
import { sampleCounts } from '../simulator/measure.ts';
import type { Rng } from '../simulator/rng.ts';
import { StateVector } from '../simulator/state-vector.ts';
import type { ClusteringProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { countsFields } from './measurement-counts.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * qkmeans / clustering: Lloyd's k-means whose point–centroid distances are estimated on the
 * simulator with a swap test. Features are first translated so every coordinate is positive
 * (distances are unchanged by a translation, and positive vectors have non-negative overlaps, so
 * the overlap's sign is known). Point x and centroid c are amplitude-encoded as x/|x| and c/|c|
 * on m = ⌈log2 d⌉ qubits each (loaded directly into the state vector; no state-preparation
 * circuit is synthesised); the swap test (H, controlled-SWAPs, H on an ancilla) is run and its
 * ancilla measured `shots` times: P(0) = (1 + F)/2 with F = ⟨x̂|ĉ⟩², so
 *   |x - c|² ≈ |x|² + |c|² - 2|x||c|·√F̂,   F̂ = max(0, 2·p̂₀ - 1).
 * Centroids start by k-means++ and are updated classically (means). Instances whose swap-test
 * work exceeds a budget run classical k-means instead, labelled `classical_kmeans`.
 */

/**
 * Point·centroid·feature operations allowed for the Lloyd iterations of one request: beyond,
 * max_iterations is lowered to fit (reported as `iterations_cap`).
 */
const CLASSICAL_WORK_BUDGET = 2e9;
/** Simulated amplitude·shot operations allowed per request before falling back to classical k-means. */
const QUANTUM_WORK_BUDGET = 3e9;

interface SwapTest {
  /** Swap-test circuits run so far (each sampled `shots` times). */
  runs: number;
  qubits: number;
  circuit: Circuit;
  state: StateVector;
  m: number;
}

function swapTest(dim: number): SwapTest {
  const m = Math.max(1, Math.ceil(Math.log2(dim)));
  const qubits = 2 * m + 1;
  const anc = 2 * m;
  const c = new Circuit(qubits);
  c.h(anc);
  for (let i = 0; i < m; i++) {
    // controlled-SWAP(anc; i, m+i) as CX · Toffoli · CX
    c.cx(m + i, i);
    c.mcx([anc, i], m + i);
    c.cx(m + i, i);
  }
  c.h(anc);
  c.measureAll();
  return { runs: 0, qubits, circuit: c, state: StateVector.zero(qubits), m };
}

function norm(v: readonly number[]): number {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
}

function dist2(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2;
  return s;
}

/** Squared distance estimated from `shots` measurements of the swap test's ancilla. */
function estimateDist2(t: SwapTest, x: readonly number[], c: readonly number[], shots: number, rng: Rng): number {
  const nx = norm(x);
  const nc = norm(c);
  if (nx === 0 || nc === 0) return nx * nx + nc * nc;
  const { re, im } = t.state;
  re.fill(0);
  im.fill(0);
  const dimA = 1 << t.m;
  for (let a = 0; a < x.length; a++) for (let b = 0; b < c.length; b++) re[a + b * dimA] = (x[a]! / nx) * (c[b]! / nc);
  t.circuit.run(t.state);
  t.runs++;
  const counts = sampleCounts(t.state, shots, rng);
  let zeros = 0;
  for (const [z, n] of counts) if (((z >> (2 * t.m)) & 1) === 0) zeros += n;
  const fidelity = Math.max(0, (2 * zeros) / shots - 1);
  return Math.max(0, nx * nx + nc * nc - 2 * nx * nc * Math.sqrt(fidelity));
}

/** k-means++ seeding in O(n·k·d): the squared distance to the nearest centroid is kept up to date. */
function kmeansPlusPlus(points: number[][], k: number, rng: Rng): number[][] {
  const centroids = [[...points[Math.floor(rng.next() * points.length)]!]];
  const d = points.map((p) => dist2(p, centroids[0]!));
  while (centroids.length < k) {
    const total = d.reduce((a, b) => a + b, 0);
    let u = rng.next() * total;
    let pick = 0;
    while (pick < points.length - 1 && u >= d[pick]!) u -= d[pick++]!;
    const next = [...points[total > 0 ? pick : centroids.length % points.length]!];
    centroids.push(next);
    points.forEach((p, i) => {
      d[i] = Math.min(d[i]!, dist2(p, next));
    });
  }
  return centroids;
}

function means(points: number[][], assign: number[], previous: number[][]): number[][] {
  return previous.map((old, j) => {
    const members = points.filter((_, i) => assign[i] === j);
    if (members.length === 0) return old;
    return old.map((_, f) => members.reduce((s, p) => s + p[f]!, 0) / members.length);
  });
}

function lloyd(points: number[][], start: number[][], maxIterations: number, nearest: (p: number[], centroids: number[][]) => number): { assign: number[]; centroids: number[][]; iterations: number } {
  let centroids = start;
  let assign: number[] = [];
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    const next = points.map((p) => nearest(p, centroids));
    const changed = next.some((a, i) => a !== assign[i]);
    assign = next;
    centroids = means(points, assign, centroids);
    if (!changed) {
      iterations++;
      break;
    }
  }
  return { assign, centroids, iterations };
}

const argmin = (values: number[]): number => values.reduce((best, v, i) => (v < values[best]! ? i : best), 0);

export function solveClustering(problem: ClusteringProblem, ctx: SolverContext): SolverOutput {
  const raw = problem.data.map((d) => d.features);
  const dim = raw[0]!.length;
  // translate into the positive orthant, keeping a margin of 1% of each feature's range
  const shift = Array.from({ length: dim }, (_, f) => {
    const col = raw.map((p) => p[f]!);
    const lo = Math.min(...col);
    const range = Math.max(...col) - lo || 1;
    return -lo + 0.01 * range;
  });
  const points = raw.map((p) => p.map((x, f) => x + shift[f]!));
  const k = problem.k;
  const perIteration = points.length * k * dim;
  const maxIterations = Math.max(1, Math.min(problem.max_iterations, Math.floor(CLASSICAL_WORK_BUDGET / perIteration)));
  const start = kmeansPlusPlus(points, k, ctx.rng);
  const test = swapTest(dim);
  const work = points.length * k * maxIterations * (2 ** test.qubits * (4 * test.m + 3) + ctx.shots * 12);
  const quantum = work <= QUANTUM_WORK_BUDGET;

  const exactNearest = (p: number[], cs: number[][]): number => argmin(cs.map((c) => dist2(p, c)));
  const classical = lloyd(points, start, maxIterations, exactNearest);
  // the classical path is the classical reference itself: run once
  const result = quantum ? lloyd(points, start, maxIterations, (p, cs) => argmin(cs.map((c) => estimateDist2(test, p, c, ctx.shots, ctx.rng)))) : classical;
  const inertia = (assign: number[], cs: number[][]): number => points.reduce((s, p, i) => s + dist2(p, cs[assign[i]!]!), 0);
  // the returned centroids are the means of the returned clusters, so inertia is measured exactly
  const energy = inertia(result.assign, result.centroids);
  const classicalInertia = inertia(classical.assign, classical.centroids);
  const agreement = points.filter((p, i) => exactNearest(p, result.centroids) === result.assign[i]).length / points.length;
  const summary = summarizeCircuit(test.circuit, problem.options?.include_qasm);
  const clusters = result.centroids.map((c, j) => ({
    id: j,
    members: problem.data.filter((_, i) => result.assign[i] === j).map((d) => d.id),
    centroid: c.map((x, f) => x - shift[f]!),
  }));
  return {
    solution: {
      method: quantum ? 'swap_test_kmeans' : 'classical_kmeans',
      ...(quantum ? {} : { reason: 'the swap-test work for this instance exceeds the per-request simulation budget' }),
      clusters,
      iterations: result.iterations,
      inertia: energy,
      classical_inertia: classicalInertia,
      classical_scope: 'classical k-means (exact distances) from the same k-means++ start',
      assignment_agreement: agreement,
      circuit: quantum ? summary : undefined,
      // each swap test is one circuit sampled meta.shots times
      circuits_run: test.runs,
      total_shots: test.runs * (quantum ? ctx.shots : 0),
      ...(maxIterations < problem.max_iterations ? { iterations_cap: maxIterations, iterations_cap_reason: `max_iterations lowered to fit the per-request work budget (${CLASSICAL_WORK_BUDGET.toExponential(0)} point·centroid·feature operations)` } : {}),
      empty_clusters: clusters.filter((c) => c.members.length === 0).length,
      ...countsFields(problem.options, () => (quantum ? 'each swap test is its own circuit, one ancilla measured: no single histogram' : 'no circuit ran: classical k-means answered')),
    },
    meta: { shots: quantum ? ctx.shots : 0, optimal_count: 0, energy, depth: quantum ? summary.depth : 0 },
  };
}
