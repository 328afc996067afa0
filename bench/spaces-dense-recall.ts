/**
 * The dense half of hybrid search at scale, against float32 brute force (ExactVectorIndex): the
 * recall@10 and time of the exact column scan (Int8VectorIndex: what the built-in embedder's
 * spaces search), of the graph alone and of the graph with BM25's list as a hint (vector-index.ts,
 * `alsoConsider`: what model embedders' spaces past 200,000 chunks search), and BM25's own time,
 * per labelled query, with how many dimensions each query vector has nonzero.
 *
 * It opens a space a daemon filled and kept (`npm run bench:spaces-http -- --chunks 1000000
 * --keep-data <dir>`): the vectors are read from its spaces.db into each index; the graph-fronted
 * index loads a graph the daemon saved (no build) when the data dir has one (`--graph <file>`
 * names one, e.g. from an older version's run; without any the graph rows are left out). BM25
 * lists come from the library opened on the same data dir, in process. Query vectors are made as
 * svc's search makes them (the space's idf).
 *
 * Then what users see: hybrid recall@10 on the labelled set's answers (the labelled documents
 * went up as labelled-<i>.md, as bench:spaces-http uploads them), the library opened with the
 * exact column scan as the dense half and, when there is a graph, with the graph.
 *
 * Usage: npm run bench:spaces-dense-recall -- --data <dir> [--space bench --seed 1 --candidates 1024 --graph <file> --json]
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { firstRelevantRank, percentile, recallAtK } from '../src/spaces/eval/eval-metrics.ts';
import { generateLabelledSet } from '../src/spaces/eval/labelled-set.ts';
import { ExactVectorIndex } from '../src/spaces/exact-vector-index.ts';
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
    graph: { type: 'string' },
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
const truth = new ExactVectorIndex(dims);
// Rescoring from the stored vectors, as a space of the built-in embedder does (space-indexes.ts).
const selectVector = db.prepare('SELECT vector FROM chunk_vectors WHERE chunk_id = ?');
const scan = new Int8VectorIndex(dims, {
  storedVectors: (ids) => ids.map((id) => {
    const row = selectVector.get(id) as { vector: Uint8Array } | undefined;
    return row === undefined ? undefined : new Float32Array(row.vector.slice().buffer);
  }),
});
const graph = new HnswVectorIndex(dims, flags.candidates === undefined ? {} : { candidates: Number(flags.candidates) });
const graphDir = join(dataDir, 'spaces', 'graphs');
const graphPath = flags.graph ?? (existsSync(graphDir) ? readdirSync(graphDir).filter((name) => !name.endsWith('.partial')).map((name) => join(graphDir, name))[0] : undefined);
log(`reading ${space.chunk_count.toLocaleString('en-US')} vectors`);
let batch: { id: number; vector: Float32Array }[] = [];
const add = (): void => {
  truth.upsert(batch);
  scan.upsert(batch);
  if (graphPath !== undefined) graph.upsert(batch);
  batch = [];
};
for (const row of db.prepare('SELECT chunk_id, vector FROM chunk_vectors WHERE space_id = ?').iterate(space.id) as Iterable<{ chunk_id: number; vector: Uint8Array }>) {
  batch.push({ id: row.chunk_id, vector: new Float32Array(row.vector.slice().buffer) });
  if (batch.length === 8192) add();
}
add();
const withGraph = graphPath !== undefined && graph.load(graphPath);
// Opening the space with the built-in embedder's default index deletes a saved graph (it has no use
// for one); a copy is put back at the end so the data dir can be measured again.
const graphCopy = withGraph && graphPath.startsWith(graphDir) ? join(mkdtempSync(join(tmpdir(), 'svc-dense-recall-')), 'graph.usearch') : undefined;
if (graphCopy !== undefined) copyFileSync(graphPath!, graphCopy);
if (withGraph) {
  log(`graph ${graphPath} loaded: ${graph.pendingCount} vectors pending, approximate ${graph.approximate}`);
  if (!graph.approximate) throw new Error('the graph does not answer (too far behind): let the daemon finish building it before it stops');
} else log(graphPath === undefined ? 'no saved graph: the graph rows are left out' : `${graphPath}: not a graph the index could load`);

const set = generateLabelledSet({ seed: Number(flags.seed) });
const texts = set.queries.map((query) => query.text);
const vectors = spaceQueryVectors(db, flags.space, embedder, texts);
const rowIdOf = db.prepare('SELECT id FROM chunks WHERE public_id = ?');

const graphFirst = (dimensions: number) => new HnswVectorIndex(dimensions);
const library = await openSpaceLibrary({ dataDir, embedder, vectorIndex: graphFirst });
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
const truthMs: number[] = [];
const scanMs: number[] = [];
const graphMs: number[] = [];
const hintedMs: number[] = [];
const nonzero: number[] = [];
let scanFound = 0;
let graphFound = 0;
let hintedFound = 0;
let truths = 0;
for (const [i, vector] of vectors.entries()) {
  if (!vector.some((v) => v !== 0)) continue;
  nonzero.push(vector.filter((v) => v !== 0).length);
  const expected = new Set(timed(truthMs, () => truth.search(vector, K)).map((hit) => hit.id));
  truths += expected.size;
  scanFound += timed(scanMs, () => scan.search(vector, DEPTH)).slice(0, K).filter((hit) => expected.has(hit.id)).length;
  if (!withGraph) continue;
  graphFound += timed(graphMs, () => graph.search(vector, DEPTH)).slice(0, K).filter((hit) => expected.has(hit.id)).length;
  hintedFound += timed(hintedMs, () => graph.search(vector, DEPTH, undefined, bm25Lists[i])).slice(0, K).filter((hit) => expected.has(hit.id)).length;
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
const hybridGraph = withGraph ? await hybridLabelRecall(graphFirst) : null;
log('hybrid search, labelled answers: the exact column scan as the dense half (the default for this embedder)');
const hybridScan = await hybridLabelRecall(undefined);
if (graphCopy !== undefined) {
  if (!existsSync(graphPath!)) copyFileSync(graphCopy, graphPath!);
  rmSync(join(graphCopy, '..'), { recursive: true, force: true });
}
const result = {
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load_average_start: loadStart, load_average_end: loadavg() },
  chunks: space.chunk_count, queries: scanMs.length, candidates: graph.candidates,
  query_nonzero_dimensions: { of: dims, p10: percentile(nonzero, 10), p50: percentile(nonzero, 50), p90: percentile(nonzero, 90), max: Math.max(...nonzero) },
  recall_at_10_vs_float32: { column_scan: scanFound / truths, ...(withGraph ? { graph: graphFound / truths, graph_with_bm25_hint: hintedFound / truths } : {}) },
  float32_brute_force: row(truthMs), column_scan: row(scanMs),
  ...(withGraph ? { graph: row(graphMs), graph_with_bm25_hint: row(hintedMs) } : {}),
  bm25_in_process: row(bm25Ms),
  hybrid_labelled: { column_scan: hybridScan, graph: hybridGraph },
};
if (flags.json) {
  console.log(JSON.stringify(result, null, 2));
} else {
  const f = (v: number, d = 2) => v.toFixed(d);
  const q = result.query_nonzero_dimensions;
  console.log(`dense half of hybrid search: ${result.chunks} chunks, ${result.queries} labelled queries (nonzero dimensions p10 / p50 / p90 / max ${q.p10} / ${q.p50} / ${q.p90} / ${q.max} of ${dims}), ${result.candidates} graph candidates; load ${loadStart.map((l) => f(l)).join(' ')} -> ${loadavg().map((l) => f(l)).join(' ')}`);
  console.log('| dense list | recall@10 vs float32 | p50 / p99 ms |');
  console.log('|---|---:|---:|');
  console.log(`| exact column scan | ${f(result.recall_at_10_vs_float32.column_scan, 3)} | ${f(result.column_scan.p50_ms)} / ${f(result.column_scan.p99_ms)} |`);
  if (withGraph) {
    console.log(`| graph alone | ${f(graphFound / truths, 3)} | ${f(result.graph!.p50_ms)} / ${f(result.graph!.p99_ms)} |`);
    console.log(`| graph + BM25's ${DEPTH} rescored | ${f(hintedFound / truths, 3)} | ${f(result.graph_with_bm25_hint!.p50_ms)} / ${f(result.graph_with_bm25_hint!.p99_ms)} |`);
  }
  console.log(`| (float32 brute force in JS, the truth) | 1.000 | ${f(result.float32_brute_force.p50_ms)} / ${f(result.float32_brute_force.p99_ms)} |`);
  console.log(`| (BM25 list, library in process) | | ${f(result.bm25_in_process.p50_ms)} / ${f(result.bm25_in_process.p99_ms)} |`);
  const h = (name: string, r: { recall_at_10: number; p50_ms: number; p99_ms: number } | null) => (r === null ? '' : `${name} ${f(r.recall_at_10, 3)} (p50 / p99 ${f(r.p50_ms)} / ${f(r.p99_ms)} ms)`);
  console.log(`hybrid recall@10 of the labelled answers, in process: ${[h('exact column scan', hybridScan), h('graph', hybridGraph)].filter(Boolean).join(', ')}`);
}
db.close();
