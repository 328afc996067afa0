import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRID, GRID_MIN, withGrid } from '../../console/src/classification-grid.ts';
import { MAX_MAGNITUDE as CONSOLE_MAX_MAGNITUDE, PREDICT_MAX } from '../../console/src/solve-limits.ts';
import { classificationProblemSchema, MAX_MAGNITUDE } from '../../src/quantum/solve-schemas.ts';

/**
 * The grid the classification page adds to `predict`: never what makes a valid request fail
 * (predict's limit, the feature bounds), and malformed input goes to the API as typed.
 */
const training = [{ features: [0, 0], label: 'a' }, { features: [1, 1], label: 'b' }];
const problem = (predict: unknown[], trainingData: unknown = training) => ({ type: 'classification', training_data: trainingData, predict });
const point = (x: number, y: number) => ({ features: [x, y] });

test('the console repeats the solve API\'s limits faithfully', () => {
  assert.equal(CONSOLE_MAX_MAGNITUDE, MAX_MAGNITUDE);
  assert.equal(classificationProblemSchema.safeParse(problem(Array.from({ length: PREDICT_MAX }, () => point(0, 0)))).success, true);
  assert.equal(classificationProblemSchema.safeParse(problem(Array.from({ length: PREDICT_MAX + 1 }, () => point(0, 0)))).success, false);
});

test('the full grid for a few points, and the problem the API accepts', () => {
  const { problem: sent, plan } = withGrid(problem([point(0.5, 0.5)]));
  assert.deepEqual(plan, { own: 1, points: GRID * GRID, side: GRID });
  assert.equal((sent as { predict: unknown[] }).predict.length, 1 + GRID * GRID);
  assert.equal(classificationProblemSchema.safeParse(sent).success, true);
});

test('near predict\'s limit the grid shrinks, then is left out with the reason', () => {
  for (const own of [4424, 4425, 4900, PREDICT_MAX - GRID_MIN * GRID_MIN]) {
    const { problem: sent, plan } = withGrid(problem(Array.from({ length: own }, (_, i) => point(i % 7, i % 5))));
    const predict = (sent as { predict: unknown[] }).predict;
    assert.ok(predict.length <= PREDICT_MAX, `${own}: ${predict.length}`);
    assert.ok(plan !== null && 'side' in plan && plan.side >= GRID_MIN && plan.side <= GRID, `${own}: ${JSON.stringify(plan)}`);
    assert.equal(classificationProblemSchema.safeParse(sent).success, true, `${own}`);
  }
  const crowded = problem(Array.from({ length: PREDICT_MAX - GRID_MIN * GRID_MIN + 1 }, () => point(0, 0)));
  const { problem: sent, plan } = withGrid(crowded);
  assert.equal(sent, crowded, 'sent as typed');
  assert.ok(plan !== null && 'skipped' in plan && plan.skipped.includes(String(PREDICT_MAX)));
});

test('features near the bounds: grid points stay inside ±MAX_MAGNITUDE', () => {
  const edge = problem([point(MAX_MAGNITUDE, -MAX_MAGNITUDE)], [{ features: [-MAX_MAGNITUDE, MAX_MAGNITUDE], label: 'a' }, { features: [0.9e12, 0], label: 'b' }]);
  const { problem: sent, plan } = withGrid(edge);
  assert.ok(plan !== null && 'side' in plan);
  const values = (sent as { predict: { features: number[] }[] }).predict.flatMap((p) => p.features);
  assert.ok(values.every((v) => Math.abs(v) <= MAX_MAGNITUDE));
  assert.equal(classificationProblemSchema.safeParse(sent).success, true);
});

test('malformed problems go as typed, for the API\'s 422: no grid, no exception', () => {
  const hostile: unknown[] = [
    null, 42, 'text', [], {},
    problem([null]), problem([point(0, 0)], null), problem([point(0, 0)], 5), problem([point(0, 0)], { length: 3 }),
    problem([{ features: 'xy' }]), problem([{ features: [1, '2'] }]), problem([{ features: [1, 2, 3] }]), problem([{}]),
    { training_data: training, predict: 'all' },
  ];
  for (const p of hostile) {
    const { problem: sent, plan } = withGrid(p);
    assert.equal(sent, p, JSON.stringify(p));
    assert.equal(plan, null, JSON.stringify(p));
  }
});
