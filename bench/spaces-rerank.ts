/**
 * Spaces search with and without the rerank stage, in the same run on the same space: the
 * labelled set (src/spaces/eval/labelled-set.ts) plus generated documents until the space holds
 * `--chunks` chunks, then every labelled query in hybrid mode, top 10, once fused only and once
 * fused then reranked (the top `--depth` fused candidates read by the reranker, the best 10
 * kept: src/spaces/space-reranker.ts). Reports recall@10, MRR@10, nDCG@10 and latency p50/p99
 * for both, alternating query by query so load on the machine falls on both alike.
 *
 * The reranker is the tiny random-weights fixture unless `--reranker <file.gguf>` names a real
 * one (bge-reranker-v2-m3, jina-reranker-v2): with the fixture the quality figures only show the
 * stage runs; its latency is a floor (a 64-wide, 2-block model; a real one is ~10^4 times larger).
 *
 * Usage: npm run bench:spaces-rerank [-- --chunks 100000 --depth 30 --rounds 1 --threads 1 --reranker path --json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama } from 'node-llama-cpp';
import { HashedEmbedder } from '../src/spaces/hashed-embedder.ts';
import { openSpaceLibrary } from '../src/spaces/space-library.ts';
import { rerankResults, type Reranker } from '../src/spaces/space-reranker.ts';
import type { SearchResult } from '../src/spaces/space-types.ts';
import { firstRelevantRank, meanReciprocalRank, ndcgAtK, recallAtK, summarizeLatencies } from '../src/spaces/eval/eval-metrics.ts';
import { ingestDocuments } from '../src/spaces/eval/evaluate-space.ts';
import { generateBulkDocuments, generateLabelledSet, type LabelledDocument } from '../src/spaces/eval/labelled-set.ts';
import { writeTinyGguf } from '../test/helpers/tiny-gguf.ts';

const { values: flags } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    depth: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '1' },
    threads: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    reranker: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const TARGET_CHUNKS = Number(flags.chunks);
const DEPTH = Number(flags.depth);
const ROUNDS = Math.max(1, Number(flags.rounds));
const SEED = Number(flags.seed);
const TOP_K = 10;
const log = (line: string): void => void process.stderr.write(`${line}\n`);

function* documentsUntil(first: readonly LabelledDocument[], reserved: readonly string[], target: number): Generator<LabelledDocument> {
  let chunks = 0;
  for (const doc of first) {
    yield doc;
    chunks += doc.input.chunks.length;
  }
  for (const doc of generateBulkDocuments({ seed: SEED, reserved })) {
    if (chunks >= target) return;
    yield doc;
    chunks += doc.input.chunks.length;
  }
}

const rerankerPath = flags.reranker ?? writeTinyGguf(fileURLToPath(new URL('.cache/bench-tiny-reranker.gguf', import.meta.url)), { reranker: true, name: 'svc-tiny-reranker' });
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath: rerankerPath });
const ranking = await model.createRankingContext({ contextSize: Math.min(model.trainContextSize, 4096), threads: Number(flags.threads) });
const reranker: Reranker = { id: flags.reranker ?? 'svc-tiny-reranker (fixture)', rank: (query, texts) => ranking.rankAll(query, [...texts]) };

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-rerank-'));
const loadStart = loadavg().map((x) => Number(x.toFixed(2)));
try {
  const library = await openSpaceLibrary({ dataDir, embedder: new HashedEmbedder() });
  const set = generateLabelledSet({ seed: SEED });
  await library.createSpace('rerank');
  const started = performance.now();
  const { ids } = await ingestDocuments(library, 'rerank', documentsUntil(set.documents, set.names, TARGET_CHUNKS), undefined, 'bulk');
  await library.warmUp('rerank');
  const space = await library.getSpace('rerank');
  log(`space: ${space.chunk_count} chunks in ${space.document_count} documents, ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const runs = { fused: { ranks: [] as (number | null)[], ms: [] as number[] }, reranked: { ranks: [] as (number | null)[], ms: [] as number[] } };
  for (const query of set.queries.slice(0, 10)) await library.search('rerank', { query: query.text, top_k: DEPTH });
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of set.queries) {
      const target = ids.get(query.documentKey);
      const relevant = (r: SearchResult) => r.document_id === target && r.text.includes(query.answerSpan);
      let t = performance.now();
      const fused = await library.search('rerank', { query: query.text, mode: 'hybrid', top_k: TOP_K });
      runs.fused.ms.push(performance.now() - t);
      t = performance.now();
      const reranked = await rerankResults(await library.search('rerank', { query: query.text, mode: 'hybrid', top_k: Math.max(TOP_K, DEPTH) }), query.text, reranker, TOP_K);
      runs.reranked.ms.push(performance.now() - t);
      if (round > 0) continue;
      runs.fused.ranks.push(firstRelevantRank(fused, relevant));
      runs.reranked.ranks.push(firstRelevantRank(reranked, relevant));
    }
  }
  await library.close();
  const summary = Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, {
    queries: run.ranks.length,
    recallAt10: recallAtK(run.ranks, 10),
    mrrAt10: meanReciprocalRank(run.ranks, 10),
    ndcgAt10: ndcgAtK(run.ranks, 10),
    latency: summarizeLatencies(run.ms),
  }]));
  const machine = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, loadAverage: [loadStart, loadavg().map((x) => Number(x.toFixed(2)))] };
  const setup = { chunks: space.chunk_count, documents: space.document_count, depth: DEPTH, rounds: ROUNDS, threads: Number(flags.threads), reranker: reranker.id };
  if (flags.json) {
    console.log(JSON.stringify({ machine, setup, summary }, null, 2));
  } else {
    console.log(`Spaces rerank bench: ${machine.cores} x ${machine.cpu}, Node ${machine.node}, load ${machine.loadAverage.map((l) => l.join(' ')).join(' -> ')}`);
    console.log(`${setup.chunks.toLocaleString('en-US')} chunks, ${summary.fused!.queries} labelled queries x ${ROUNDS} round(s), hybrid top ${TOP_K}; rerank depth ${DEPTH}, reranker ${setup.reranker}, ${setup.threads} thread(s)\n`);
    console.log('| search | recall@10 | MRR@10 | nDCG@10 | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, s] of Object.entries(summary)) {
      console.log(`| ${name} | ${s.recallAt10.toFixed(3)} | ${s.mrrAt10.toFixed(3)} | ${s.ndcgAt10.toFixed(3)} | ${s.latency.p50Ms.toFixed(2)} | ${s.latency.p99Ms.toFixed(2)} |`);
    }
  }
} finally {
  await ranking.dispose();
  await model.dispose();
  rmSync(dataDir, { recursive: true, force: true });
}
