/**
 * The dense half of hybrid search at scale, against the exact scan: recall@10 of the graph alone
 * and of the graph with BM25's list as a hint (what hybrid search does: vector-index.ts,
 * `alsoConsider`), with the time each takes and BM25's own, per labelled query.
 *
 * It opens a space a daemon filled and kept (`npm run bench:spaces-http -- --chunks 1000000
 * --keep-data <dir>`): the vectors are read from its spaces.db into the exact index and into
 * svc's graph-fronted index, which loads the graph the daemon saved (no build); BM25 lists come
 * from the library opened on the same data dir, in process. Query vectors are made as svc's
 * search makes them (the space's idf).
 *
 * Then what users see: hybrid recall@10 on the labelled set's answers (the labelled documents
 * went up as labelled-<i>.md, as bench:spaces-http uploads them), the library opened once with
 * svc's index (the graph) and once with the exact scan as the dense half.
 *
 * Usage: npm run bench:spaces-dense-recall -- --data <dir> [--space bench --seed 1 --candidates 1024 --json]
 */
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { firstRelevantRank, percentile, recallAtK } from '../src/spaces/eval/eval-metrics.ts';
import { generateLabelledSet } from '../src/spaces/eval/labelled-set.ts';
import { HashedEmbedder } from '../src/spaces/hashed-embedder.ts';
import { HnswVectorIndex } from '../src/spaces/hnsw-vector-index.ts';
import { Int8VectorIndex } from '../src/spaces/int8-vector-index.ts';
import { openSpaceLibrary } from '../src/spaces/space-library.ts';
import type { VectorIndexFactory } from '../src/spaces/vector-index.ts';
import { spaceQueryVectors } from './space-query-vectors.ts';

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string' },
    space: { type: 'string', default: 'bench' },
    seed: { type: 'string', default: '1' },
    candidates: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
if (flags.data === undefined) throw new Error('--data: the data dir a daemon kept (bench:spaces-http --keep-data)');
const dataDir = flags.data;
const K = 10;
/** What hybrid search asks of each list (space-search.ts, HYBRID_DEPTH). */
const DEPTH = 50;

const log = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

const loadStart = loadavg();
const db = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'), { readOnly: true });
const space = db.prepare('SELECT id, chunk_count FROM spaces WHERE name = ?').get(flags.space) as { id: number; chunk_count: number };
const embedder = new HashedEmbedder();
const dims = embedder.dimensions;
const exact = new Int8VectorIndex(dims);
const graph = new HnswVectorIndex(dims, flags.candidates === undefined ? {} : { candidates: Number(flags.candidates) });
log(`reading ${space.chunk_count.toLocaleString('en-US')} vectors`);
let batch: { id: number; vector: Float32Array }[] = [];
for (const row of db.prepare('SELECT chunk_id, vector FROM chunk_vectors WHERE space_id = ?').iterate(space.id) as Iterable<{ chunk_id: number; vector: Uint8Array }>) {
  batch.push({ id: row.chunk_id, vector: new Float32Array(row.vector.slice().buffer) });
  if (batch.length === 8192) {
    exact.upsert(batch);
    graph.upsert(batch);
    batch = [];
  }
}
exact.upsert(batch);
graph.upsert(batch);
const graphDir = join(dataDir, 'spaces', 'graphs');
const graphFile = readdirSync(graphDir).find((name) => !name.endsWith('.partial'));
if (graphFile === undefined || !graph.load(join(graphDir, graphFile))) throw new Error(`no graph the index could load in ${graphDir}`);
log(`graph ${graphFile} loaded: ${graph.pendingCount} vectors pending, approximate ${graph.approximate}`);
if (!graph.approximate) throw new Error('the graph does not answer (too far behind): let the daemon finish building it before it stops');

const set = generateLabelledSet({ seed: Number(flags.seed) });
const texts = set.queries.map((query) => query.text);
const vectors = spaceQueryVectors(db, flags.space, embedder, texts);
const rowIdOf = db.prepare('SELECT id FROM chunks WHERE public_id = ?');

const library = await openSpaceLibrary({ dataDir, embedder });
log('filling the BM25 index');
await library.warmUp(flags.space);
const bm25Ms: number[] = [];
const bm25Lists: number[][] = [];
for (const text of texts) {
  const start = performance.now();
  const hits = await library.search(flags.space, { query: text, mode: 'bm25', top_k: DEPTH });
  bm25Ms.push(performance.now() - start);
  bm25Lists.push(hits.map((hit) => (rowIdOf.get(hit.chunk_id) as { id: number }).id));
}
await library.close();

const timed = <T>(ms: number[], fn: () => T): T => {
  const start = performance.now();
  const out = fn();
  ms.push(performance.now() - start);
  return out;
};
const exactMs: number[] = [];
const graphMs: number[] = [];
const hintedMs: number[] = [];
let graphFound = 0;
let hintedFound = 0;
let truths = 0;
for (const [i, vector] of vectors.entries()) {
  if (!vector.some((v) => v !== 0)) continue;
  const truth = new Set(timed(exactMs, () => exact.search(vector, DEPTH)).slice(0, K).map((hit) => hit.id));
  const alone = timed(graphMs, () => graph.search(vector, DEPTH)).slice(0, K);
  const hinted = timed(hintedMs, () => graph.search(vector, DEPTH, undefined, bm25Lists[i])).slice(0, K);
  truths += truth.size;
  graphFound += alone.filter((hit) => truth.has(hit.id)).length;
  hintedFound += hinted.filter((hit) => truth.has(hit.id)).length;
}
const row = (ms: number[]) => ({ p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) });

/** Hybrid search over the labelled queries with `vectorIndex` as the dense half: recall@10 of the answers, and latency in process. */
async function hybridLabelRecall(vectorIndex: VectorIndexFactory | undefined): Promise<{ recall_at_10: number; p50_ms: number; p99_ms: number }> {
  const documentOf = db.prepare('SELECT public_id FROM documents WHERE space_id = ? AND source = ?');
  const idOfKey = new Map(set.documents.map((doc, i) => [doc.key, (documentOf.get(space.id, `labelled-${i}.md`) as { public_id: string } | undefined)?.public_id]));
  const hybrid = await openSpaceLibrary({ dataDir, embedder, ...(vectorIndex === undefined ? {} : { vectorIndex }) });
  try {
    await hybrid.warmUp(flags.space);
    const ms: number[] = [];
    const ranks: (number | null)[] = [];
    for (const query of set.queries) {
      const start = performance.now();
      const results = await hybrid.search(flags.space, { query: query.text, mode: 'hybrid', top_k: K });
      ms.push(performance.now() - start);
      const target = idOfKey.get(query.documentKey);
      ranks.push(firstRelevantRank(results, (r) => r.document_id === target && r.text.includes(query.answerSpan)));
    }
    return { recall_at_10: recallAtK(ranks, K), ...row(ms) };
  } finally {
    await hybrid.close();
  }
}
log('hybrid search, labelled answers: the graph as the dense half');
const hybridGraph = await hybridLabelRecall(undefined);
log('hybrid search, labelled answers: the exact scan as the dense half');
const hybridExact = await hybridLabelRecall((dimensions) => new Int8VectorIndex(dimensions));
const result = {
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load_average_start: loadStart, load_average_end: loadavg() },
  chunks: space.chunk_count, queries: exactMs.length, candidates: graph.candidates,
  recall_at_10: { graph: graphFound / truths, graph_with_bm25_hint: hintedFound / truths },
  exact: row(exactMs), graph: row(graphMs), graph_with_bm25_hint: row(hintedMs), bm25_in_process: row(bm25Ms),
  hybrid_labelled: { graph: hybridGraph, exact: hybridExact },
};
if (flags.json) {
  console.log(JSON.stringify(result, null, 2));
} else {
  const f = (v: number, d = 2) => v.toFixed(d);
  console.log(`dense half of hybrid search: ${result.chunks} chunks, ${result.queries} labelled queries, ${result.candidates} graph candidates; load ${loadStart.map((l) => f(l)).join(' ')} -> ${loadavg().map((l) => f(l)).join(' ')}`);
  console.log('| dense list | recall@10 vs exact | p50 / p99 ms |');
  console.log('|---|---:|---:|');
  console.log(`| graph alone | ${f(result.recall_at_10.graph, 3)} | ${f(result.graph.p50_ms)} / ${f(result.graph.p99_ms)} |`);
  console.log(`| graph + BM25's ${DEPTH} rescored | ${f(result.recall_at_10.graph_with_bm25_hint, 3)} | ${f(result.graph_with_bm25_hint.p50_ms)} / ${f(result.graph_with_bm25_hint.p99_ms)} |`);
  console.log(`| exact int8 scan | 1.000 | ${f(result.exact.p50_ms)} / ${f(result.exact.p99_ms)} |`);
  console.log(`| (BM25 list, library in process) | | ${f(result.bm25_in_process.p50_ms)} / ${f(result.bm25_in_process.p99_ms)} |`);
  console.log(`hybrid recall@10 of the labelled answers, in process: graph ${f(hybridGraph.recall_at_10, 3)} (p50 / p99 ${f(hybridGraph.p50_ms)} / ${f(hybridGraph.p99_ms)} ms), exact scan ${f(hybridExact.recall_at_10, 3)} (${f(hybridExact.p50_ms)} / ${f(hybridExact.p99_ms)} ms)`);
}
db.close();
