import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { StateVector } from '../../../src/quantum/simulator/state-vector.ts';
import { classificationProblemSchema, clusteringProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { solveClustering } from '../../../src/quantum/solvers/qkmeans-clustering.ts';
import { measuredFraction, SCALE_GRID, solveClassification, trainSvm, zzFeatureMap, zzFeatureState } from '../../../src/quantum/solvers/qsvm-classification.ts';
import { blobs } from '../fixtures.ts';

const ctx = (seed = 1, shots = 1024) => ({ shots, rng: seededRng(seed) });

describe('qsvm / classification', () => {
  it('the ZZ feature map gives fidelity 1 for equal inputs and < 1 otherwise', () => {
    const a = StateVector.zero(2);
    zzFeatureMap([0.3, 1.1]).run(a);
    const b = StateVector.zero(2);
    zzFeatureMap([0.9, 0.2]).run(b);
    let re = 0;
    let im = 0;
    for (let z = 0; z < 4; z++) {
      re += a.re[z]! * b.re[z]! + a.im[z]! * b.im[z]!;
      im += a.re[z]! * b.im[z]! - a.im[z]! * b.re[z]!;
    }
    assert.ok(Math.abs(a.norm2() - 1) < 1e-12);
    assert.ok(re * re + im * im < 0.99);
  });

  it('shot noise is binomial around the fidelity', () => {
    const rng = seededRng(3);
    const draws = Array.from({ length: 2000 }, () => measuredFraction(0.3, 1024, rng));
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    const sd = Math.sqrt(draws.reduce((s, x) => s + (x - mean) ** 2, 0) / draws.length);
    assert.ok(Math.abs(mean - 0.3) < 0.003, `mean ${mean}`);
    assert.ok(Math.abs(sd - Math.sqrt(0.3 * 0.7 / 1024)) < 0.002, `sd ${sd}`);
    assert.equal(measuredFraction(1, 1024, rng), 1);
    assert.equal(measuredFraction(0, 1024, rng), 0);
  });

  it('SMO separates a linearly separable set with a linear kernel', () => {
    const x = [-2, -1.5, -1, 1, 1.5, 2];
    const y = Int8Array.from([-1, -1, -1, 1, 1, 1]);
    const kernel = x.map((a) => Float64Array.from(x, (b) => a * b));
    const { alpha, b } = trainSvm(kernel, y);
    const f = (v: number) => x.reduce((s, xi, i) => s + alpha[i]! * y[i]! * xi * v, b);
    assert.ok(f(-1.2) < 0 && f(1.2) > 0 && Math.abs(f(0)) < 0.5);
  });

  it('classifies separable two-class data with at least 90% accuracy', () => {
    const train = blobs({ yes: [0, 0], no: [3, 3] }, 15, 0.5, 11);
    const test = blobs({ yes: [0, 0], no: [3, 3] }, 25, 0.5, 12);
    const { solution, meta } = solveClassification(classificationProblemSchema.parse({ type: 'classification', training_data: train, predict: test.map((t) => ({ features: t.features })) }), ctx());
    const predictions = solution['predictions'] as { label: string; confidence: number }[];
    const accuracy = predictions.filter((p, i) => p.label === test[i]!.label).length / test.length;
    assert.ok(accuracy >= 0.9, `accuracy ${accuracy}`);
    assert.equal(solution['method'], 'qsvm_zz_kernel');
    for (const p of predictions) assert.ok(p.confidence >= 0.5 && p.confidence <= 1);
    assert.ok(meta.depth > 0 && meta.shots === 1024);
  });

  it('handles three classes one-vs-rest', () => {
    const centers = { red: [0, 0, 0], green: [4, 0, 2], blue: [0, 4, 4] };
    const train = blobs(centers, 12, 0.6, 5);
    const test = blobs(centers, 15, 0.6, 6);
    const { solution } = solveClassification(classificationProblemSchema.parse({ type: 'classification', training_data: train, predict: test.map((t) => ({ features: t.features })) }), ctx(2));
    const predictions = solution['predictions'] as { label: string }[];
    const accuracy = predictions.filter((p, i) => p.label === test[i]!.label).length / test.length;
    assert.ok(accuracy >= 0.9, `accuracy ${accuracy}`);
    assert.deepEqual(solution['labels'], ['blue', 'green', 'red']);
  });

  it('refuses more features than qubits it can simulate (422 problem_too_large)', () => {
    const wide = Array.from({ length: 40 }, (_, i) => i / 40);
    const problem = classificationProblemSchema.parse({ type: 'classification', training_data: [{ features: wide, label: 'a' }, { features: wide.map((v) => -v), label: 'b' }], predict: [{ features: wide }] });
    assert.throws(() => solveClassification(problem, ctx()), (e: { name?: string; status?: number }) => e.name === 'SimulatorCapacityError' || e.status === 422);
  });
});

/** Two gaussian classes whose centres are `apart` spreads apart (Euclidean), in `dim` features, off the origin and unevenly scaled. */
function twoClasses(dim: number, apart: number, perClass: number, seed: number): { label: string; features: number[] }[] {
  const offset = Array.from({ length: dim }, (_, i) => 40 + 15 * i);
  const step = apart / Math.sqrt(dim);
  const points = blobs({ left: offset.map(() => 0), right: offset.map(() => step) }, perClass, 1, seed);
  // features on different scales (the solver standardises them): feature i in units of 10^(i-1)
  return points.map((p) => ({ label: p.label, features: p.features.map((v, i) => (v + offset[i]!) * 10 ** (i - 1)) }));
}

/** A classical RBF SVM (γ = 1/dim on standardised features) trained and scored in the test: the baseline. */
function rbfAccuracy(train: { label: string; features: number[] }[], test: { label: string; features: number[] }[]): number {
  const dim = train[0]!.features.length;
  const mean = Array.from({ length: dim }, (_, f) => train.reduce((s, d) => s + d.features[f]!, 0) / train.length);
  const sd = Array.from({ length: dim }, (_, f) => Math.sqrt(train.reduce((s, d) => s + (d.features[f]! - mean[f]!) ** 2, 0) / train.length));
  const z = (x: number[]) => x.map((v, f) => (v - mean[f]!) / sd[f]!);
  const k = (a: number[], b: number[]) => Math.exp(-a.reduce((s, v, i) => s + (v - b[i]!) ** 2, 0) / dim);
  const zt = train.map((d) => z(d.features));
  const y = Int8Array.from(train, (d) => (d.label === 'left' ? 1 : -1));
  const { alpha, b } = trainSvm(zt.map((a) => Float64Array.from(zt, (c) => k(a, c))), y);
  return test.filter((t) => {
    const zz = z(t.features);
    const f = zt.reduce((s, zi, i) => s + alpha[i]! * y[i]! * k(zi, zz), b);
    return (f > 0 ? 'left' : 'right') === t.label;
  }).length / test.length;
}

describe('qsvm: standardised features and a cross-validated kernel scale (issue 13)', () => {
  const run = (train: { label: string; features: number[] }[], test: { features: number[] }[], seed: number) =>
    solveClassification(classificationProblemSchema.parse({ type: 'classification', training_data: train, predict: test.map((t) => ({ features: t.features })) }), ctx(seed));
  const accuracyOf = (solution: Record<string, unknown>, test: { label: string }[]) =>
    (solution['predictions'] as { label: string }[]).filter((p, i) => p.label === test[i]!.label).length / test.length;

  it('the feature state built pass by pass equals running the ZZ feature map gate by gate', () => {
    const rng = seededRng(8);
    for (let n = 1; n <= 6; n++) {
      const x = Array.from({ length: n }, () => 4 * rng.next() - 2);
      const gates = StateVector.zero(n);
      zzFeatureMap(x).run(gates);
      const fast = zzFeatureState(x);
      for (let z = 0; z < 2 ** n; z++) {
        assert.ok(Math.abs(fast.re[z]! - gates.re[z]!) < 1e-12 && Math.abs(fast.im[z]! - gates.im[z]!) < 1e-12, `n=${n} z=${z}`);
      }
    }
  });

  it('two 4-feature classes nine spreads apart (20 training points each) are classified without error', () => {
    for (const seed of [1, 2, 3, 4]) {
      const train = twoClasses(4, 9, 20, seed);
      const test = twoClasses(4, 9, 20, seed + 100);
      const { solution } = run(train, test, seed);
      assert.equal(accuracyOf(solution, test), 1, `seed ${seed}`);
      assert.equal(rbfAccuracy(train, test), 1, `seed ${seed}: the classical baseline`);
      assert.equal(solution['training_accuracy'], 1);
      assert.equal(solution['cross_validated_accuracy'], 1);
      // a margin, not a memorised training set (the issue saw 32 of 40 points as support vectors)
      const sv = (solution['support_vectors'] as { count: number }[])[0]!.count;
      assert.ok(sv <= 10, `seed ${seed}: ${sv} support vectors`);
    }
  });

  it('overlapping classes: accuracy above chance and close to a classical RBF SVM on the same data', () => {
    let ours = 0;
    let classical = 0;
    const seeds = [1, 2, 3, 4, 5];
    for (const seed of seeds) {
      const train = twoClasses(4, 1.5, 20, seed);
      const test = twoClasses(4, 1.5, 40, seed + 100);
      const { solution } = run(train, test, seed);
      const cv = solution['cross_validated_accuracy'] as number;
      const fit = solution['training_accuracy'] as number;
      assert.ok(cv >= 0 && cv <= 1 && fit >= 0 && fit <= 1, `cv ${cv}, training ${fit}`);
      ours += accuracyOf(solution, test) / seeds.length;
      classical += rbfAccuracy(train, test) / seeds.length;
    }
    assert.ok(ours > 0.6, `mean accuracy ${ours}`);
    assert.ok(ours >= classical - 0.1, `mean accuracy ${ours} vs the RBF SVM's ${classical}`);
  });

  it('reports the cross-validation: folds, every candidate scale with its accuracy, the one chosen', () => {
    const train = twoClasses(3, 4, 12, 6);
    const { solution } = run(train, [train[0]!], 6);
    const cv = solution['cross_validation'] as { folds: number; selected_scale: number; selected_by: string; candidates: { kernel_scale: number; cross_validated_accuracy: number }[] };
    assert.equal(cv.folds, 5);
    assert.equal(cv.selected_by, 'cross_validation');
    assert.deepEqual(cv.candidates.map((c) => c.kernel_scale), [...SCALE_GRID]);
    for (const c of cv.candidates) assert.ok(c.cross_validated_accuracy >= 0 && c.cross_validated_accuracy <= 1);
    const best = Math.max(...cv.candidates.map((c) => c.cross_validated_accuracy));
    assert.equal(solution['cross_validated_accuracy'], best);
    assert.equal(cv.candidates.find((c) => c.kernel_scale === cv.selected_scale)?.cross_validated_accuracy, best);
    assert.deepEqual(solution['feature_scaling'], { ...(solution['feature_scaling'] as object), method: 'standardise', statistics: 'training_data', kernel_scale: cv.selected_scale });
    // fewer training points than folds: one fold per point (leave-one-out)
    const tiny = run(twoClasses(2, 9, 2, 7), [{ features: [0, 0] }], 7).solution;
    assert.equal((tiny['cross_validation'] as { folds: number }).folds, 4);
    assert.ok((tiny['cross_validated_accuracy'] as number) >= 0 && (tiny['cross_validated_accuracy'] as number) <= 1);
  });
});

describe('qkmeans / clustering', () => {
  it('recovers well-separated blobs with swap-test distances', () => {
    const points = blobs({ p: [0, 0], q: [6, 0], r: [3, 6] }, 12, 0.5, 9).map((b, i) => ({ id: `${b.label}${i}`, features: b.features }));
    const { solution, meta } = solveClustering(clusteringProblemSchema.parse({ type: 'clustering', data: points, k: 3, max_iterations: 10 }), ctx(4));
    assert.equal(solution['method'], 'swap_test_kmeans');
    const clusters = solution['clusters'] as { id: number; members: string[] }[];
    assert.equal(clusters.length, 3);
    for (const c of clusters) {
      assert.equal(c.members.length, 12);
      assert.equal(new Set(c.members.map((m) => m[0])).size, 1, `mixed cluster ${c.members.join(',')}`);
    }
    assert.ok(Math.abs((solution['inertia'] as number) - (solution['classical_inertia'] as number)) < 1e-9);
    assert.equal(meta.energy, solution['inertia']);
    assert.equal((solution['circuit'] as { qubits: number }).qubits, 3);
  });

  it('rejects k larger than the number of points (422, named field)', () => {
    const r = clusteringProblemSchema.safeParse({ type: 'clustering', data: [{ id: 'a', features: [1] }], k: 2, max_iterations: 3 });
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['k']);
  });
});

describe('qkmeans / qsvm: shot accounting, bounds, ids', () => {
  const points = blobs({ p: [0, 0], q: [6, 0] }, 6, 0.5, 3).map((b, i) => ({ id: `${b.label}${i}`, features: b.features }));

  it('reports the circuits run and total shots separately from per-circuit meta.shots', () => {
    const { solution, meta } = solveClustering(clusteringProblemSchema.parse({ type: 'clustering', data: points, k: 2, max_iterations: 5 }), ctx(2));
    assert.ok(meta.optimal_count <= meta.shots);
    const runs = solution['circuits_run'] as number;
    assert.ok(runs >= points.length * 2, `circuits_run ${runs}`);
    assert.equal(solution['total_shots'], runs * meta.shots);
    assert.equal(solution['empty_clusters'], 0);
    const train = blobs({ a: [0, 0], b: [3, 3] }, 4, 0.3, 2);
    const svm = solveClassification(classificationProblemSchema.parse({ type: 'classification', training_data: train, predict: [{ features: [0, 0] }] }), ctx(2));
    // every candidate scale's training kernel, then one row per prediction
    const candidates = (svm.solution['cross_validation'] as { candidates: unknown[] }).candidates.length;
    assert.equal(candidates, SCALE_GRID.length);
    assert.equal(svm.solution['circuits_run'], (candidates * 8 * 7) / 2 + 8);
    assert.equal(svm.solution['total_shots'], ((candidates * 8 * 7) / 2 + 8) * svm.meta.shots);
  });

  it('refuses huge magnitudes in features by schema (no overflow to a 500)', () => {
    const huge = clusteringProblemSchema.safeParse({ type: 'clustering', data: [{ id: 'a', features: [1e160] }, { id: 'b', features: [0] }], k: 1, max_iterations: 3 });
    assert.equal(huge.success, false);
    assert.deepEqual(huge.error?.issues[0]?.path, ['data', 0, 'features', 0]);
    const svm = classificationProblemSchema.safeParse({ type: 'classification', training_data: [{ features: [1e308], label: 'a' }, { features: [-1e308], label: 'b' }], predict: [{ features: [0] }] });
    assert.equal(svm.success, false);
    // the largest accepted magnitude still solves
    const edge = solveClustering(clusteringProblemSchema.parse({ type: 'clustering', data: [{ id: 'a', features: [1e12, -1e12] }, { id: 'b', features: [-1e12, 1e12] }, { id: 'c', features: [1e12, -1e12] }], k: 2, max_iterations: 3 }), ctx(1));
    assert.ok(Number.isFinite(edge.meta.energy));
    const svmEdge = solveClassification(
      classificationProblemSchema.parse({ type: 'classification', training_data: [{ features: [1e12, -1e12], label: 'a' }, { features: [-1e12, 1e12], label: 'b' }, { features: [1e12, 1e12], label: 'a' }], predict: [{ features: [1e12, -1e12] }] }),
      ctx(1),
    );
    assert.equal((svmEdge.solution['predictions'] as { label: string }[])[0]!.label, 'a');
    assert.ok(Number.isFinite(svmEdge.meta.energy));
  });

  it('rejects duplicate point ids and k beyond the documented maximum', () => {
    const dup = clusteringProblemSchema.safeParse({ type: 'clustering', data: [{ id: 'a', features: [1] }, { id: 'a', features: [2] }], k: 1, max_iterations: 3 });
    assert.equal(dup.success, false);
    assert.deepEqual(dup.error?.issues[0]?.path, ['data']);
    const many = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, features: [i] }));
    const big = clusteringProblemSchema.safeParse({ type: 'clustering', data: many, k: 300, max_iterations: 3 });
    assert.equal(big.success, false);
    assert.deepEqual(big.error?.issues[0]?.path, ['k']);
  });

  it('lowers max_iterations to the classical work budget and says so', () => {
    const many = Array.from({ length: 5000 }, (_, i) => ({ id: `p${i}`, features: Array.from({ length: 64 }, (_, f) => ((i * 31 + f * 17) % 97) / 7) }));
    const { solution } = solveClustering(clusteringProblemSchema.parse({ type: 'clustering', data: many, k: 256, max_iterations: 1000 }), ctx(1));
    assert.equal(solution['method'], 'classical_kmeans');
    assert.equal(solution['iterations_cap'], Math.floor(2e9 / (5000 * 256 * 64)));
    assert.ok((solution['iterations'] as number) <= (solution['iterations_cap'] as number));
  });
});
