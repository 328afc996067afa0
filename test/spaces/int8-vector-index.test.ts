import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExactVectorIndex } from '../../src/spaces/exact-vector-index.ts';
import { GROW_BY_QUARTER_FROM } from '../../src/spaces/grown-capacity.ts';
import { columnScanModule } from '../../src/spaces/column-scan-kernel.ts';
import { Int8VectorIndex, type Int8VectorIndexOptions } from '../../src/spaces/int8-vector-index.ts';
import { type VectorIndex } from '../../src/spaces/vector-index.ts';
import { randomVectors, unit } from '../helpers/random-vectors.ts';

const kernel = columnScanModule();
const noKernel = kernel === null ? 'the scan kernel (wasm/column-scan.wasm) did not compile here' : false;
const variants: { name: string; make: (dims: number) => Int8VectorIndex; skip: string | false }[] = [
  { name: 'native kernel', make: (dims) => new Int8VectorIndex(dims, { kernel }), skip: noKernel },
  { name: 'JS scan', make: (dims) => new Int8VectorIndex(dims, { kernel: null }), skip: false },
  // Pages of 64 rows: every test below then crosses many pages (the default's pages are 16,384 rows).
  { name: 'native kernel, pages of 64 rows', make: (dims) => new Int8VectorIndex(dims, { kernel, pageRows: 64 }), skip: noKernel },
  { name: 'JS scan, pages of 64 rows', make: (dims) => new Int8VectorIndex(dims, { kernel: null, pageRows: 64 }), skip: false },
  // No 16-bit rows: candidates rescored from the vectors a store keeps (what the built-in embedder's spaces do).
  { name: 'native kernel, rescored from stored vectors', make: (dims) => withStore(dims, { kernel, pageRows: 64 }), skip: noKernel },
  { name: 'JS scan, rescored from stored vectors', make: (dims) => withStore(dims, { kernel: null }), skip: false },
];

/** An index that rescores from a Map standing in for the space's store, which its upserts and removals keep up to date. */
function withStore(dims: number, options: Int8VectorIndexOptions): Int8VectorIndex {
  const kept = new Map<number, Float32Array>();
  const index = new Int8VectorIndex(dims, { ...options, storedVectors: (ids) => ids.map((id) => kept.get(id)) });
  const upsert = index.upsert.bind(index);
  const remove = index.remove.bind(index);
  index.upsert = (entries) => {
    const list = [...entries];
    for (const { id, vector } of list) kept.set(id, Float32Array.from(vector));
    upsert(list);
  };
  index.remove = (ids) => {
    const list = [...ids];
    for (const id of list) kept.delete(id);
    remove(list);
  };
  return index;
}

/** How far the index's similarities may be from float32's: its fine rows keep 16 bits (1e-5 measured). */
const TOLERANCE = 1e-4;

/**
 * The exact scan's k nearest, in its order, with its similarities, up to ties: two neighbours
 * closer than TOLERANCE may come in either order, and at the k-th place either may be kept.
 */
function assertSameAsExact(index: VectorIndex, exact: ExactVectorIndex, queries: Float32Array[], k: number, accept?: (id: number) => boolean): void {
  for (const query of queries) {
    const expected = exact.search(query, k, accept);
    const hits = index.search(query, k, accept);
    assert.equal(hits.length, expected.length);
    const expectedIds = new Set(expected.map((e) => e.id));
    const kth = expected.at(-1)?.similarity ?? 0;
    for (const [i, hit] of hits.entries()) {
      assert.ok(Math.abs(hit.similarity - expected[i]!.similarity) < TOLERANCE, `place ${i}: similarity ${hit.similarity} vs ${expected[i]!.similarity}`);
      if (!expectedIds.has(hit.id)) assert.ok(Math.abs(hit.similarity - kth) < TOLERANCE, `id ${hit.id} is not among the exact ${k} nearest`);
    }
    // Ties aside, the very same ids: count the places where the order differs by more than a swap of near-equals.
    const differing = hits.filter((hit, i) => hit.id !== expected[i]!.id && Math.abs(hit.similarity - expected[i]!.similarity) >= TOLERANCE);
    assert.deepEqual(differing, []);
  }
}

/** `index` and a float exact scan beside it, both holding `vectors` as ids 1, 2, …. */
function filledBeside(index: Int8VectorIndex, vectors: Float32Array[]): { vectors: Float32Array[]; index: Int8VectorIndex; exact: ExactVectorIndex } {
  const exact = new ExactVectorIndex(index.dimensions);
  const entries = vectors.map((vector, i) => ({ id: i + 1, vector }));
  index.upsert(entries);
  exact.upsert(entries);
  return { vectors, index, exact };
}

for (const { name, make, skip } of variants) {
  test(`int8 index (${name}): the same k nearest, in the same order, with the same similarities as the exact scan`, { skip }, () => {
    for (const dims of [16, 256]) {
      const { vectors, index, exact } = filledBeside(make(dims), randomVectors(3000, dims, 7 + dims));
      assert.equal(index.size, 3000);
      assertSameAsExact(index, exact, randomVectors(40, dims, 99), 10);
      assertSameAsExact(index, exact, randomVectors(10, dims, 98), 50);
      // A stored vector is its own nearest neighbour.
      assert.equal(index.search(vectors[1234]!, 1)[0]!.id, 1235);
    }
  });

  test(`int8 index (${name}): sparse queries (few nonzero dimensions, as the built-in embedder's questions) find what the exact scan finds`, { skip }, () => {
    const dims = 384;
    const { vectors, index, exact } = filledBeside(make(dims), randomVectors(3000, dims, 11));
    // 1 (one column), 3 (a group of four padded), 4, 5, 79 (the questions' median) and 383 nonzero dimensions.
    for (const nonzero of [1, 3, 4, 5, 79, 383]) assertSameAsExact(index, exact, sparseVectors(8, dims, nonzero, 100 + nonzero), 10);
    // Negative weights only, and a query that is one row's own nonzero part.
    assertSameAsExact(index, exact, sparseVectors(4, dims, 40, 7).map((v) => v.map((x) => -Math.abs(x))), 10);
    assert.equal(index.search(vectors[77]!, 1)[0]!.id, 78);
  });

  test(`int8 index (${name}): removed ids never come back, replaced vectors move, accept filters`, { skip }, () => {
    const index = make(2);
    index.upsert([
      { id: 1, vector: unit([1, 0]) },
      { id: 2, vector: unit([1, 0.1]) },
      { id: 3, vector: unit([0, 1]) },
    ]);
    index.remove([1, 42]);
    assert.equal(index.size, 2);
    assert.deepEqual(index.search(unit([1, 0]), 3).map((h) => h.id), [2, 3]);
    index.upsert([{ id: 3, vector: unit([1, 0]) }]);
    assert.equal(index.size, 2);
    assert.deepEqual(index.search(unit([1, 0]), 1).map((h) => h.id), [3]);
    assert.deepEqual(index.search(unit([1, 0]), 3, (id) => id !== 3).map((h) => h.id), [2]);
    assert.deepEqual(index.search(unit([1, 0]), 0), []);
    index.remove([2, 3]);
    assert.equal(index.size, 0);
    assert.deepEqual(index.search(unit([1, 0]), 5), []);
    assert.throws(() => index.upsert([{ id: 9, vector: new Float32Array(3) }]), RangeError);
    assert.throws(() => index.search(new Float32Array(3), 1), RangeError);
  });

  test(`int8 index (${name}): filters return k results whenever k pass, broad or narrow, equal to the exact filtered search`, { skip }, () => {
    const dims = 32;
    const { index, exact } = filledBeside(make(dims), randomVectors(4000, dims, 5));
    const queries = randomVectors(15, dims, 6);
    // About half pass; one in ten (still found among the widened nearest); one in a hundred and
    // one in a thousand (both need the scan of the accepted rows alone).
    for (const every of [2, 10, 100, 1000]) {
      const accept = (id: number) => id % every === 0;
      const passing = Math.floor(4000 / every);
      const k = Math.min(20, passing);
      for (const query of queries) assert.equal(index.search(query, 20, accept).length, k);
      assertSameAsExact(index, exact, queries, 20, accept);
    }
    assert.deepEqual(index.search(queries[0]!, 10, () => false), []);
  });

  test(`int8 index (${name}): grows past its first capacity and keeps every row; removals really remove`, { skip }, () => {
    const index = make(8);
    const exact = new ExactVectorIndex(8);
    const vectors = randomVectors(5000, 8, 3);
    const entries = vectors.map((vector, i) => ({ id: i, vector }));
    index.upsert(entries);
    exact.upsert(entries);
    const evens = Array.from({ length: 2500 }, (_, i) => i * 2);
    index.remove(evens);
    exact.remove(evens);
    assert.equal(index.size, 2500);
    // Rows moved into the removed slots keep their vectors exactly.
    assertSameAsExact(index, exact, randomVectors(20, 8, 4), 25);
    for (const probe of [1, 999, 4999]) assert.equal(index.search(vectors[probe]!, 1)[0]!.id, probe);
    // A removed row's own vector finds something else, never the removed id.
    for (const removed of [0, 1000, 4998]) assert.ok(index.search(vectors[removed]!, 50).every((h) => h.id % 2 === 1));
    // Re-adding a removed id brings it back exactly once.
    index.upsert([{ id: 1000, vector: vectors[1000]! }]);
    assert.equal(index.size, 2501);
    const hits = index.search(vectors[1000]!, 50);
    assert.equal(hits[0]!.id, 1000);
    assert.equal(hits.filter((h) => h.id === 1000).length, 1);
  });

  test(`int8 index (${name}): past a whole page and past the size where the per-row numbers grow by a quarter, every row is still the one upserted`, { skip }, () => {
    const index = make(4);
    const count = GROW_BY_QUARTER_FROM + GROW_BY_QUARTER_FROM / 2;
    const vectors = randomVectors(count, 4, 5);
    index.upsert(vectors.map((vector, i) => ({ id: i + 1, vector })));
    assert.equal(index.size, count);
    assert.equal(index.ids().length, count);
    for (const at of [0, 63, 64, 1023, 16_383, 16_384, GROW_BY_QUARTER_FROM - 1, GROW_BY_QUARTER_FROM, count - 1]) {
      const alone = make(4);
      alone.upsert([{ id: 7, vector: vectors[at]! }]);
      assert.deepEqual(index.coarseRow(at + 1), alone.coarseRow(7));
      assert.ok(Math.abs(index.rescoreIds(vectors[at]!, [at + 1], 1)[0]!.similarity - 1) < TOLERANCE);
    }
  });

  test(`int8 index (${name}): ids up to 2^53, and only safe integers`, { skip }, () => {
    const index = make(4);
    const big = [2 ** 53 - 1, 2 ** 40 + 3, 2 ** 31, 1];
    index.upsert(big.map((id, i) => ({ id, vector: unit([i === 0 ? 1 : 0, i === 1 ? 1 : 0, i === 2 ? 1 : 0, i === 3 ? 1 : 0]) })));
    assert.equal(index.search(unit([1, 0, 0, 0]), 1)[0]!.id, 2 ** 53 - 1);
    assert.equal(index.search(unit([0, 1, 0, 0]), 1)[0]!.id, 2 ** 40 + 3);
    assert.equal(index.search(unit([0, 0, 1, 0]), 1)[0]!.id, 2 ** 31);
    index.remove([2 ** 53 - 1]);
    assert.ok(index.search(unit([1, 0, 0, 0]), 4).every((h) => h.id !== 2 ** 53 - 1));
    for (const bad of [2 ** 53, 1.5, Number.NaN]) assert.throws(() => index.upsert([{ id: bad, vector: unit([1, 0, 0, 0]) }]), RangeError);
  });

  test(`int8 index (${name}): zero vectors are orthogonal to everything`, { skip }, () => {
    const index = make(3);
    index.upsert([
      { id: 1, vector: new Float32Array(3) },
      { id: 2, vector: unit([1, 1, 0]) },
      { id: 3, vector: unit([-1, 0, 0]) },
    ]);
    const hits = index.search(unit([1, 0, 0]), 3);
    assert.deepEqual(hits.map((h) => h.id), [2, 1, 3]);
    assert.equal(hits[1]!.similarity, 0);
    const zero = index.search(new Float32Array(3), 2, (id) => id !== 1);
    assert.deepEqual(zero.map((h) => h.similarity), [0, 0]);
  });
}

test('int8 index: pages must be a power of two of at least 16 rows', () => {
  assert.throws(() => new Int8VectorIndex(4, { kernel: null, pageRows: 48 }), /power of two/);
  assert.throws(() => new Int8VectorIndex(4, { kernel: null, pageRows: 0 }), /power of two/);
  assert.throws(() => new Int8VectorIndex(4, { kernel: null, pageRows: 8 }), /at least 16/);
});

test('int8 index: the native kernel and the JS scan agree', { skip: noKernel }, () => {
  const dims = 64;
  const vectors = randomVectors(2000, dims, 21);
  const native = new Int8VectorIndex(dims, { kernel });
  const js = new Int8VectorIndex(dims, { kernel: null });
  const entries = vectors.map((vector, i) => ({ id: (i + 1) * 7, vector }));
  native.upsert(entries);
  js.upsert(entries);
  for (const query of [...randomVectors(20, dims, 22), ...sparseVectors(20, dims, 9, 23)]) {
    assert.deepEqual(native.search(query, 30), js.search(query, 30));
    assert.deepEqual(native.search(query, 30, (id) => id % 3 === 0), js.search(query, 30, (id) => id % 3 === 0));
  }
});

test('int8 index: the kernel and the JS scan agree across pages, after removals move rows between them', { skip: noKernel }, () => {
  const dims = 24;
  const vectors = randomVectors(1000, dims, 31);
  const native = new Int8VectorIndex(dims, { kernel, pageRows: 16 });
  const js = new Int8VectorIndex(dims, { kernel: null, pageRows: 16 });
  const entries = vectors.map((vector, i) => ({ id: i + 1, vector }));
  native.upsert(entries);
  js.upsert(entries);
  const gone = Array.from({ length: 300 }, (_, i) => i * 3 + 1);
  native.remove(gone);
  js.remove(gone);
  native.upsert(entries.slice(0, 50));
  js.upsert(entries.slice(0, 50));
  for (const query of [...randomVectors(10, dims, 32), ...sparseVectors(10, dims, 5, 33)]) assert.deepEqual(native.search(query, 40), js.search(query, 40));
});

test('int8 index rescored from stored vectors: exact similarities, and an id the store no longer holds is not a result', () => {
  const dims = 48;
  const vectors = randomVectors(500, dims, 41);
  const kept = new Map(vectors.map((vector, i) => [i + 1, vector] as const));
  const index = new Int8VectorIndex(dims, { storedVectors: (ids) => ids.map((id) => kept.get(id)) });
  index.upsert([...kept].map(([id, vector]) => ({ id, vector })));
  const exact = new ExactVectorIndex(dims);
  exact.upsert([...kept].map(([id, vector]) => ({ id, vector })));
  const query = vectors[9]!;
  const expected = exact.search(query, 5);
  const hits = index.search(query, 5);
  assert.deepEqual(hits.map((h) => h.id), expected.map((h) => h.id));
  for (const [i, hit] of hits.entries()) assert.ok(Math.abs(hit.similarity - expected[i]!.similarity) < 1e-6);
  // Deleted from the store before the index heard of it: never surfaces.
  kept.delete(10);
  assert.ok(index.search(query, 5).every((h) => h.id !== 10));
  assert.equal(index.search(query, 5).length, 5);
});

/** Unit vectors with `nonzero` random dimensions set (the rest zero). */
function sparseVectors(count: number, dims: number, nonzero: number, seed: number): Float32Array[] {
  const dense = randomVectors(count, dims, seed);
  const picks = randomVectors(count, dims, seed + 1);
  return dense.map((vector, i) => {
    const keep = new Set([...picks[i]!.keys()].sort((a, b) => picks[i]![a]! - picks[i]![b]!).slice(0, nonzero));
    return unit(Array.from(vector, (x, j) => (keep.has(j) ? x : 0)));
  });
}

test('the committed column-scan.wasm is what the AssemblyScript source compiles to (npm run build:kernels)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kernels-'));
  try {
    const root = new URL('../../', import.meta.url).pathname;
    const out = join(dir, 'column-scan.wasm');
    const asc = join(root, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
    execFileSync(process.execPath, [asc, 'src/spaces/wasm/column-scan.as.ts', '--config', 'src/spaces/wasm/asconfig.json', '-o', out], { cwd: root, stdio: 'pipe' });
    const committed = readFileSync(new URL('../../src/spaces/wasm/column-scan.wasm', import.meta.url));
    assert.ok(readFileSync(out).equals(committed), 'the committed column-scan.wasm differs from a fresh build: run npm run build:kernels and commit it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
