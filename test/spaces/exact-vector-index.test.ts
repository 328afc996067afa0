import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExactVectorIndex } from '../../src/spaces/exact-vector-index.ts';
import { randomVectors, unit } from '../helpers/random-vectors.ts';

test('exact index: the k nearest by cosine, best first, equal to a full sort', () => {
  const dims = 16;
  const vectors = randomVectors(3000, dims, 7);
  const index = new ExactVectorIndex(dims);
  index.upsert(vectors.map((vector, i) => ({ id: i + 1, vector })));
  assert.equal(index.size, 3000);
  const query = randomVectors(1, dims, 99)[0]!;
  const dot = (v: Float32Array) => v.reduce((sum, x, j) => sum + x * query[j]!, 0);
  const expected = vectors.map((v, i) => ({ id: i + 1, similarity: dot(v) })).sort((a, b) => b.similarity - a.similarity).slice(0, 10);
  const hits = index.search(query, 10);
  assert.deepEqual(hits.map((h) => h.id), expected.map((e) => e.id));
  for (const [i, hit] of hits.entries()) assert.ok(Math.abs(hit.similarity - expected[i]!.similarity) < 1e-5);
});

test('exact index: removed ids never come back, replaced vectors move, accept filters', () => {
  const index = new ExactVectorIndex(2);
  index.upsert([
    { id: 1, vector: unit([1, 0]) },
    { id: 2, vector: unit([1, 0.1]) },
    { id: 3, vector: unit([0, 1]) },
  ]);
  index.remove([1, 42]);
  assert.equal(index.size, 2);
  assert.deepEqual(index.search(unit([1, 0]), 3).map((h) => h.id), [2, 3]);
  index.upsert([{ id: 3, vector: unit([1, 0]) }]);
  assert.deepEqual(index.search(unit([1, 0]), 1).map((h) => h.id), [3]);
  assert.deepEqual(index.search(unit([1, 0]), 3, (id) => id !== 3).map((h) => h.id), [2]);
  assert.deepEqual(index.search(unit([1, 0]), 0), []);
  assert.throws(() => index.upsert([{ id: 9, vector: new Float32Array(3) }]), RangeError);
});

test('exact index: grows past its first capacity and keeps every row', () => {
  const index = new ExactVectorIndex(4);
  const vectors = randomVectors(5000, 4, 3);
  index.upsert(vectors.map((vector, i) => ({ id: i, vector })));
  index.remove(Array.from({ length: 2500 }, (_, i) => i * 2));
  assert.equal(index.size, 2500);
  for (const probe of [1, 999, 4999]) assert.equal(index.search(vectors[probe]!, 1)[0]!.id, probe);
});
