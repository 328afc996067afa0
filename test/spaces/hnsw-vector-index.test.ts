import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateBulkDocuments } from '../../src/spaces/eval/labelled-set.ts';
import { HashedEmbedder, hashedEmbedderVersion } from '../../src/spaces/hashed-embedder.ts';
import { defaultVectorIndex, HnswVectorIndex, usearchLoads } from '../../src/spaces/hnsw-vector-index.ts';
import { Int8VectorIndex } from '../../src/spaces/int8-vector-index.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import type { DocumentInput, Embedder } from '../../src/spaces/space-types.ts';
import type { VectorIndex, VectorIndexTraits } from '../../src/spaces/vector-index.ts';
import { randomVectors } from '../helpers/random-vectors.ts';
import { waitFor } from '../helpers/wait-for.ts';

const skip = usearchLoads() ? false : 'usearch did not load here';

/** Clustered unit vectors (a few hundred centres, each row a centre plus noise), seeded: text embeddings are clustered like this. */
function clusteredVectors(count: number, dims: number, seed: number): Float32Array[] {
  const centres = randomVectors(200, dims, seed);
  const noise = randomVectors(count, dims, seed + 1);
  return noise.map((n, i) => {
    const centre = centres[(i * 7919) % centres.length]!;
    const row = Float32Array.from(centre, (c, j) => c + 0.6 * n[j]!);
    const norm = Math.hypot(...row);
    return row.map((v) => v / norm);
  });
}

/** `candidates` well under the count, so the graph and not the rescoring finds the neighbours. */
function built(count: number, dims: number, threshold: number, vectors = clusteredVectors(count, dims, 7), candidates = 100): { index: HnswVectorIndex; exact: Int8VectorIndex; vectors: Float32Array[] } {
  const index = new HnswVectorIndex(dims, { threshold, candidates });
  const exact = new Int8VectorIndex(dims);
  const entries = vectors.map((vector, i) => ({ id: i + 1, vector }));
  index.upsert(entries);
  exact.upsert(entries);
  while (index.buildSome(500) > 0);
  return { index, exact, vectors };
}

function recallAt10(index: HnswVectorIndex, exact: Int8VectorIndex, queries: Float32Array[]): number {
  let found = 0;
  for (const query of queries) {
    const truth = new Set(exact.search(query, 10).map((hit) => hit.id));
    for (const hit of index.search(query, 10)) if (truth.has(hit.id)) found++;
  }
  return found / (queries.length * 10);
}

test('hnsw index: recall@10 of the exact scan is at least 0.98 on seeded clustered and random vectors', { skip }, () => {
  for (const vectors of [clusteredVectors(4000, 96, 7), randomVectors(4000, 96, 11)]) {
    const { index, exact } = built(vectors.length, 96, 1000, vectors);
    assert.equal(index.approximate, true);
    const queries = randomVectors(200, 96, 99).map((noise, i) => Float32Array.from(vectors[i * 13]!, (v, j) => v + 0.3 * noise[j]!));
    const recall = recallAt10(index, exact, queries);
    assert.ok(recall >= 0.98, `recall@10 ${recall}`);
  }
});

test('hnsw index: exact below the threshold, the graph from it on, exact again below it', { skip }, () => {
  const vectors = clusteredVectors(300, 32, 3);
  const index = new HnswVectorIndex(32, { threshold: 200 });
  index.upsert(vectors.slice(0, 199).map((vector, i) => ({ id: i + 1, vector })));
  assert.equal(index.buildSome(1000), 0, 'nothing to build below the threshold');
  assert.equal(index.approximate, false);
  assert.equal(index.pendingCount, 0);
  index.upsert(vectors.slice(199).map((vector, i) => ({ id: i + 200, vector })));
  assert.equal(index.pendingCount, 300);
  assert.equal(index.buildSome(100), 200);
  while (index.buildSome(100) > 0);
  assert.equal(index.approximate, true);
  index.remove(Array.from({ length: 150 }, (_, i) => i + 1));
  assert.equal(index.approximate, false);
  assert.equal(index.search(vectors[200]!, 1)[0]!.id, 201);
});

test('hnsw index: vectors not in the graph yet are found, deleted ones never come back, filters fall back to the scan', { skip }, () => {
  const { index, vectors } = built(2000, 64, 500);
  const late = clusteredVectors(50, 64, 21);
  index.upsert(late.map((vector, i) => ({ id: 5000 + i, vector })));
  assert.equal(index.pendingCount, 50);
  for (const [i, vector] of late.entries()) assert.equal(index.search(vector, 1)[0]!.id, 5000 + i);

  const removed = new Set(Array.from({ length: 400 }, (_, i) => i * 5 + 1));
  index.remove(removed);
  for (const id of removed) {
    const hits = index.search(vectors[id - 1]!, 20);
    assert.ok(hits.every((hit) => !removed.has(hit.id)), `removed id ${id} came back`);
  }
  // A filter passing one id in a hundred: fewer than k among the graph's candidates, so the scan of those.
  const accept = (id: number) => id % 100 === 2;
  const hits = index.search(vectors[1]!, 10, accept);
  assert.equal(hits.length, 10);
  assert.ok(hits.every((hit) => accept(hit.id)));
  assert.equal(hits[0]!.id, 2);
});

test('hnsw index: a saved graph loads without a rebuild; vectors it lacks are pending, ones removed since never surface', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hnsw-'));
  try {
    const { index, vectors } = built(1500, 48, 500);
    const path = join(dir, 'graph.usearch');
    assert.equal(index.save(path), true);
    assert.equal(index.dirty, false);

    const reopened = new HnswVectorIndex(48, { threshold: 500 });
    // The store after the save: id 1..20 deleted, one vector added.
    reopened.upsert(vectors.slice(20).map((vector, i) => ({ id: i + 21, vector })));
    const added = clusteredVectors(1, 48, 5)[0]!;
    reopened.upsert([{ id: 9000, vector: added }]);
    assert.equal(reopened.load(path), true);
    assert.equal(reopened.pendingCount, 1, 'only the vector added after the save waits for the graph');
    assert.equal(reopened.approximate, true);
    assert.equal(reopened.search(added, 1)[0]!.id, 9000);
    for (let id = 1; id <= 20; id++) assert.ok(reopened.search(vectors[id - 1]!, 10).every((hit) => hit.id > 20));
    assert.equal(reopened.load(join(dir, 'missing.usearch')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hnsw index: ids another ranking found (alsoConsider) are rescored beside the graph\'s candidates', { skip }, () => {
  // Random vectors and a graph asked for just k candidates: its walk misses some of the exact top 10.
  const { index, exact } = built(4000, 32, 1, randomVectors(4000, 32, 11), 10);
  let missed: { query: Float32Array; id: number } | undefined;
  for (const query of randomVectors(200, 32, 12)) {
    const found = new Set(index.search(query, 10).map((hit) => hit.id));
    const lost = exact.search(query, 10).find((hit) => !found.has(hit.id));
    if (lost !== undefined) {
      missed = { query, id: lost.id };
      break;
    }
  }
  assert.ok(missed !== undefined, 'the graph found every exact neighbour: the test needs a miss');
  const { query, id } = missed;
  const exactTop = exact.search(query, 10);
  // Given the id, the search ranks it where the exact scan does; an id the index lacks is skipped.
  const hinted = index.search(query, 10, undefined, [id, 999_999]);
  assert.ok(hinted.some((hit) => hit.id === id));
  assert.ok(hinted.every((hit) => hit.id !== 999_999));
  const place = exactTop.findIndex((hit) => hit.id === id);
  assert.equal(hinted.findIndex((hit) => hit.id === id) <= place, true);
  // A filter still applies to hinted ids.
  assert.ok(index.search(query, 10, (candidate) => candidate !== id, [id]).every((hit) => hit.id !== id));
  // The exact scan needs no hint: the same answer with or without one.
  const asIndex: VectorIndex = exact;
  assert.deepEqual(asIndex.search(query, 10, undefined, [id]), exactTop);
});

test('defaultVectorIndex: the graph-fronted index at the documented threshold for dense queries, the exact column scan for sparse ones', () => {
  for (const traits of [undefined, { sparseQueries: false }]) {
    const index = defaultVectorIndex(256, traits);
    assert.ok(index instanceof HnswVectorIndex);
    assert.equal(index.threshold, 200_000);
    assert.equal(index.dimensions, 256);
  }
  const sparse = defaultVectorIndex(384, { sparseQueries: true });
  assert.ok(sparse instanceof Int8VectorIndex);
  assert.equal((sparse as VectorIndex).buildSome, undefined, 'no graph to build');
  assert.equal(sparse.dimensions, 384);
});

/** Generated documents until `chunks` chunks. */
function documents(chunks: number): DocumentInput[] {
  const out: DocumentInput[] = [];
  let count = 0;
  for (const doc of generateBulkDocuments({ seed: 3, reserved: [] })) {
    out.push(doc.input);
    count += doc.input.chunks.length;
    if (count >= chunks) return out;
  }
  return out;
}

async function untilBuilt(index: HnswVectorIndex, file: () => boolean): Promise<void> {
  // A slice per turn, after the writes have been quiet for a moment (space-indexes.ts).
  await waitFor(() => index.pendingCount === 0 && file(), 'the graph built and saved');
}

test('space library: the graph is built on ingest, saved, loaded at the next open without a rebuild, and rebuilt for the new vectors on reindex', { skip }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-hnsw-'));
  const graphs = join(dataDir, 'spaces', 'graphs');
  const created: HnswVectorIndex[] = [];
  const vectorIndex = (dims: number) => {
    const index = new HnswVectorIndex(dims, { threshold: 40 });
    created.push(index);
    return index;
  };
  const v1: Embedder = new HashedEmbedder({ version: hashedEmbedderVersion('svc-hashed-embed-v1')! });
  try {
    let library = await openSpaceLibrary({ dataDir, embedder: v1, vectorIndex });
    await library.createSpace('kb');
    await library.addDocuments('kb', documents(120));
    assert.equal(created.length, 1, 'the first write filled the vector index');
    await untilBuilt(created[0]!, () => existsSync(graphs) && readdirSync(graphs).length === 1);
    const [v1Graph] = readdirSync(graphs);
    const query = { query: 'the quarterly report on water treatment', mode: 'dense' as const, top_k: 5 };
    const before = await library.search('kb', query);
    assert.ok(before.length > 0);
    await library.close();

    library = await openSpaceLibrary({ dataDir, embedder: v1, vectorIndex });
    const after = await library.search('kb', query);
    const reopened = created.at(-1)!;
    assert.equal(reopened.pendingCount, 0, 'the saved graph was loaded, nothing to build');
    assert.equal(reopened.approximate, true);
    assert.deepEqual(after.map((r) => r.chunk_id), before.map((r) => r.chunk_id));
    await library.close();

    // Another embedder: the old graph goes with the old vectors, a new one is built from the new.
    library = await openSpaceLibrary({ dataDir, vectorIndex });
    await library.reindex('kb');
    assert.deepEqual(readdirSync(graphs), []);
    await library.search('kb', query);
    await untilBuilt(created.at(-1)!, () => readdirSync(graphs).length === 1);
    assert.notEqual(readdirSync(graphs)[0], v1Graph);
    await library.deleteSpace('kb');
    assert.deepEqual(readdirSync(graphs), []);
    await library.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('space library: the built-in embedder\'s spaces get the exact scan (sparse queries) and lose a graph an earlier version saved; a model\'s get the graph-fronted index', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-hnsw-'));
  const graphs = join(dataDir, 'spaces', 'graphs');
  const asked: (VectorIndexTraits | undefined)[] = [];
  const made: VectorIndex[] = [];
  const vectorIndex = (dims: number, traits?: VectorIndexTraits) => {
    asked.push(traits);
    const index = defaultVectorIndex(dims, traits);
    made.push(index);
    return index;
  };
  const query = { query: 'the quarterly report on water treatment', mode: 'dense' as const, top_k: 5 };
  try {
    let library = await openSpaceLibrary({ dataDir, vectorIndex });
    await library.createSpace('kb');
    await library.addDocuments('kb', documents(120));
    await library.close();
    // What a version that built graphs for these spaces left (the space is the first, id 1).
    mkdirSync(graphs, { recursive: true });
    writeFileSync(join(graphs, 'space-1-0123456789abcdef.usearch'), 'an old graph');
    library = await openSpaceLibrary({ dataDir, vectorIndex });
    assert.ok((await library.search('kb', query)).length > 0);
    assert.deepEqual(readdirSync(graphs), [], 'the old graph is gone');
    // The index rescores from the store's vectors: ids it holds come back, one the store lacks does not.
    const [held] = (made[1] as Int8VectorIndex).ids();
    const [vector, missing] = asked[1]!.storedVectors!([held!, 987_654_321]);
    assert.equal(vector?.length, 384);
    assert.equal(missing, undefined);
    await library.close();
    assert.deepEqual(asked.map((traits) => traits?.sparseQueries), [true, true]);
    assert.ok(made.every((index) => index instanceof Int8VectorIndex));

    // A model's vectors (any other embedder id): dense queries, the graph-fronted index.
    const hashed = new HashedEmbedder();
    const model: Embedder = { id: 'acme/dense-embedder', dimensions: hashed.dimensions, embed: (texts, purpose) => hashed.embed(texts, purpose) };
    library = await openSpaceLibrary({ dataDir, embedder: model, vectorIndex });
    await library.createSpace('models');
    await library.addDocuments('models', documents(20));
    assert.equal(asked.at(-1)?.sparseQueries, false);
    assert.ok(made.at(-1) instanceof HnswVectorIndex);
    await library.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('space library: a graph too far behind to answer waits for a bulk ingest to pause, then builds', { skip }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-hnsw-'));
  const created: HnswVectorIndex[] = [];
  const vectorIndex = (dims: number) => {
    const index = new HnswVectorIndex(dims, { threshold: 100 });
    created.push(index);
    return index;
  };
  // A quiet time far above the gaps between these writes, so no slice can fit between them.
  const library = await openSpaceLibrary({ dataDir, vectorIndex, graphWriteQuietMs: 3_000 });
  try {
    await library.createSpace('kb');
    const all = documents(5_000);
    const query = { query: 'maximum operating pressure of the pump', mode: 'dense' as const, top_k: 5 };
    for (let from = 0; from < all.length; from += 20) {
      await library.addDocuments('kb', all.slice(from, from + 20));
      const index = created[0]!;
      // Every vector still waits: the build stays out of the ingest's way once the graph is too
      // far behind (more than 4,096 vectors), and before that it had no quiet moment either.
      assert.equal(index.pendingCount, index.size >= index.threshold ? index.size : 0, `nothing built between writes (${index.size} held)`);
      await sleep(5);
    }
    const index = created[0]!;
    assert.ok(index.size > 4096 && !index.approximate, 'searches use the exact scan meanwhile');
    const exact = await library.search('kb', query);
    assert.ok(exact.length > 0);
    await waitFor(() => index.pendingCount === 0, 'the graph built once the writes paused', { attempts: 1200, pauseMs: 50 });
    assert.equal(index.approximate, true);
    // The same answers from the graph (its 1,024 candidates cover this small space's best).
    assert.deepEqual((await library.search('kb', query)).map((r) => r.chunk_id), exact.map((r) => r.chunk_id));
  } finally {
    await library.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
