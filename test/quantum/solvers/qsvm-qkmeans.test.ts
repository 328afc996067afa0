import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { StateVector } from '../../../src/quantum/simulator/state-vector.ts';
import { classificationProblemSchema, clusteringProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { solveClustering } from '../../../src/quantum/solvers/qkmeans-clustering.ts';
import { measuredFraction, solveClassification, trainSvm, zzFeatureMap } from '../../../src/quantum/solvers/qsvm-classification.ts';
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
    assert.equal(svm.solution['circuits_run'], (8 * 7) / 2 + 8);
    assert.equal(svm.solution['total_shots'], ((8 * 7) / 2 + 8) * svm.meta.shots);
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
