import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stringifyInSlices } from '../../src/shared/json-in-slices.ts';

test('stringifyInSlices writes the text JSON.stringify writes, whatever the slice size', async () => {
  const values: object[] = [
    { object: 'list', data: [1, { a: 2 }, 'x', null, undefined, () => 1], model: 'm', usage: { a: 1 }, skipped: undefined },
    { data: [] },
    { data: [1], z: 2 },
    { a: 1, data: Array.from({ length: 5000 }, (_, i) => ({ i, v: [0.1, i, 'é\u2028"'] })) },
    { id: 'qb_1', results: Array.from({ length: 3 }, () => ({ solution: { entropy: '01'.repeat(40_000) } })), status: 'completed' },
  ];
  for (const value of values) {
    for (const slice of [1, 100, 64 * 1024]) {
      const key = 'results' in value ? 'results' : 'data';
      assert.equal(await stringifyInSlices(value, key, slice), JSON.stringify(value));
    }
  }
  // No array at the key: the plain serialization.
  assert.equal(await stringifyInSlices({ data: 'x' }, 'data'), '{"data":"x"}');
  assert.equal(await stringifyInSlices({ a: 1 }, 'data'), '{"a":1}');
});
