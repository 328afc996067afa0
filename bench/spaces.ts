/**
 * Knowledge spaces: retrieval quality and speed, through the library's public surface.
 *  (a) the labelled set (src/spaces/eval/labelled-set.ts): recall@5/@10, MRR@10, answer support
 *      and latency per mode, stale-memory rejection, on a fresh space;
 *  (b) ingest throughput with the built-in embedder: a few MB of generated documents, added
 *      `--ingest-runs` times each way (addDocument one after another: a transaction per
 *      document; addDocuments: many to a transaction, what uploads and `svc spaces add` do),
 *      alternating, and the embedder alone on the same chunks, to show where time goes;
 *  (c) search latency at scale: the labelled documents plus generated ones (added in bulk) until the space holds
 *      `--chunks` chunks, then every labelled query in each mode (`--rounds` times), with recall
 *      at that scale; then the library is closed and reopened (what a daemon start costs).
 *
 *  (d) with `--peer lancedb`: the 100,000-chunk space's chunks and vectors copied into LanceDB
 *      (bench/spaces-lancedb-peer.ts), every labelled query searched hybrid there too, recall@10
 *      and latency beside svc's hybrid figures from (c).
 *
 * Usage: npm run bench:spaces [-- --chunks 100000 --ingest-mb 4 --ingest-runs 5 --rounds 2 --seed 1 --embedder svc-hashed-embed-v2
 *        --peer lancedb --peer-modules <dir holding node_modules/@lancedb> --json]
 * (`--chunks 0` skips (c) and (d)). Progress goes to stderr.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { HashedEmbedder, hashedEmbedderVersion } from '../src/spaces/hashed-embedder.ts';
import { firstRelevantRank, percentile, recallAtK } from '../src/spaces/eval/eval-metrics.ts';
import { buildLanceDbPeer, loadLanceDb, type PeerHit } from './spaces-lancedb-peer.ts';
import { spaceQueryVectors } from './space-query-vectors.ts';
import { DatabaseSync } from 'node:sqlite';
import { openSpaceLibrary } from '../src/spaces/space-library.ts';
import type { SpaceLibrary } from '../src/spaces/space-types.ts';
import { evaluateSpace, fusionReport, ingestDocuments, runLabelledQueries } from '../src/spaces/eval/evaluate-space.ts';
import type { EvalReport, FusionReport, IngestHow, IngestReport, ModeReport } from '../src/spaces/eval/evaluate-space.ts';
import { formatEvalReport, formatFusion, formatIngest, formatKindTable, formatQualityTable } from '../src/spaces/eval/format-eval-report.ts';
import { generateBulkDocuments, generateLabelledSet } from '../src/spaces/eval/labelled-set.ts';
import type { LabelledDocument } from '../src/spaces/eval/labelled-set.ts';

const { values: flags } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    'ingest-mb': { type: 'string', default: '4' },
    'ingest-runs': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    seed: { type: 'string', default: '1' },
    embedder: { type: 'string', default: 'svc-hashed-embed-v2' },
    json: { type: 'boolean', default: false },
    peer: { type: 'string' },
    'peer-modules': { type: 'string' },
  },
});
if (flags.peer !== undefined && flags.peer !== 'lancedb') throw new Error(`--peer: ${flags.peer} is not a peer this bench knows (lancedb)`);
const TARGET_CHUNKS = Number(flags.chunks);
const INGEST_MB = Number(flags['ingest-mb']);
const INGEST_RUNS = Math.max(1, Number(flags['ingest-runs']));
const ROUNDS = Number(flags.rounds);
const SEED = /^\d+$/.test(flags.seed) ? Number(flags.seed) : flags.seed;
/** Which built-in embedder version: the default, or v1 to compare side by side. */
const EMBEDDER_VERSION = hashedEmbedderVersion(flags.embedder);
if (EMBEDDER_VERSION === undefined) throw new Error(`--embedder: ${flags.embedder} is not a built-in embedder`);
const builtinEmbedder = () => new HashedEmbedder({ version: EMBEDDER_VERSION });

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

function commit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** A full GC when the bench runs with --expose-gc, so heap figures are what is live. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function rssMb(): number {
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}

/** Generated documents, after the ones in `first`, until `enough(chunks so far)` says stop. */
function* documentsUntil(first: readonly LabelledDocument[], reserved: readonly string[], enough: (chunks: number, bytes: number) => boolean): Generator<LabelledDocument> {
  let chunks = 0;
  let bytes = 0;
  for (const doc of first) {
    yield doc;
    chunks += doc.input.chunks.length;
    bytes += Buffer.byteLength(doc.input.text);
  }
  for (const doc of generateBulkDocuments({ seed: SEED, reserved })) {
    if (enough(chunks, bytes)) return;
    yield doc;
    chunks += doc.input.chunks.length;
    bytes += Buffer.byteLength(doc.input.text);
  }
}

interface IngestRuns {
  how: IngestHow;
  runs: IngestReport[];
  /** Medians over the runs. */
  mbPerSecond: number;
  mbPerCpuSecond: number;
}

interface IngestBench {
  documents: number;
  chunks: number;
  bytes: number;
  each: IngestRuns;
  bulk: IngestRuns;
  /** The embedder alone on the same chunk texts (bytes of chunk text, which overlaps a little); median of the runs. */
  embedder: { bytes: number; seconds: number[]; mbPerSecond: number; dimensions: number };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function ingestRuns(how: IngestHow, runs: IngestReport[]): IngestRuns {
  return { how, runs, mbPerSecond: median(runs.map((r) => r.mbPerSecond)), mbPerCpuSecond: median(runs.map((r) => r.mbPerCpuSecond)) };
}

async function benchIngest(library: SpaceLibrary, reserved: readonly string[]): Promise<IngestBench> {
  const docs = [...documentsUntil([], reserved, (_, bytes) => bytes >= INGEST_MB * 1e6)];
  const texts = docs.flatMap((doc) => doc.input.chunks.map((chunk) => chunk.text));
  const chunkBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  const embedder = builtinEmbedder();
  const reports = new Map<IngestHow, IngestReport[]>([['each', []], ['bulk', []]]);
  const embedSeconds: number[] = [];
  for (let run = 0; run < INGEST_RUNS; run++) {
    // Alternating, so both ways see the same machine load on average.
    for (const how of (run % 2 === 0 ? ['each', 'bulk'] : ['bulk', 'each']) as IngestHow[]) {
      await library.createSpace('bench-ingest');
      const { report } = await ingestDocuments(library, 'bench-ingest', docs, undefined, how);
      reports.get(how)!.push(report);
      log(`  ingest run ${run + 1}/${INGEST_RUNS}: ${formatIngest(report)}`);
      await library.deleteSpace('bench-ingest');
    }
    const start = performance.now();
    for (let i = 0; i < texts.length; i += 128) await embedder.embed(texts.slice(i, i + 128), 'document');
    embedSeconds.push((performance.now() - start) / 1000);
  }
  const first = reports.get('each')![0]!;
  return {
    documents: first.documents,
    chunks: first.chunks,
    bytes: first.bytes,
    each: ingestRuns('each', reports.get('each')!),
    bulk: ingestRuns('bulk', reports.get('bulk')!),
    embedder: { bytes: chunkBytes, seconds: embedSeconds, mbPerSecond: chunkBytes / 1e6 / median(embedSeconds), dimensions: embedder.dimensions },
  };
}

interface ScaleBench {
  chunks: number;
  documents: number;
  ingest: IngestReport;
  rounds: number;
  modes: ModeReport[];
  fusion: FusionReport[];
  /** After ingest: filling the vector and BM25 indexes (SpaceLibrary.warmUp). */
  warmUpMs: number;
  /** The first hybrid search after the ingest, before warmUp. */
  firstSearchAfterIngestMs: number;
  /** firstSearchMs: the first hybrid search (it fills the vector index, starts the BM25 one); fullMs: from that search until the BM25 index is full. */
  reopen: { openMs: number; firstSearchMs: number; fullMs: number };
  rssMb: number;
  /** RSS before the space was made, and V8 heap and ArrayBuffers (the int8 rows, BM25 arrays) after the queries, after a GC when --expose-gc. */
  memory: { rssBeforeMb: number; heapUsedMb: number; arrayBuffersMb: number };
  peer: PeerReport | null;
}

interface PeerReport {
  peer: string;
  skipped?: string;
  rows?: number;
  buildSeconds?: number;
  recallAt10?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** Per labelled query, the rank of its first relevant hit (null: not in the top 10), as svc's modes report theirs. */
  ranks?: (number | null)[];
}

/**
 * The labelled queries against LanceDB holding the same chunks and vectors, hybrid (its FTS and
 * flat vector search fused by RRF), judged as runLabelledQueries judges svc. Query vectors are
 * made as svc's search makes them (the built-in embedder weighing words by the space's idf).
 */
async function benchPeer(dataDir: string, set: ReturnType<typeof generateLabelledSet>, ids: ReadonlyMap<string, string>): Promise<PeerReport> {
  const loaded = loadLanceDb(flags['peer-modules']);
  if ('missing' in loaded) return { peer: 'lancedb', skipped: loaded.missing };
  const dbPath = join(dataDir, 'spaces', 'spaces.db');
  const peerDir = mkdtempSync(join(tmpdir(), 'svc-bench-lancedb-'));
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const peer = await buildLanceDbPeer(loaded.lancedb, dbPath, 'bench-scale', peerDir);
    log(`  peer: lancedb table of ${peer.rows.toLocaleString('en-US')} chunks and its FTS index in ${peer.buildSeconds.toFixed(1)} s`);
    const vectors = spaceQueryVectors(db, 'bench-scale', builtinEmbedder(), set.queries.map((query) => query.text));
    for (let i = 0; i < 20; i++) await peer.search(set.queries[i]!.text, vectors[i]!, 10);
    const latencies: number[] = [];
    const ranks: (number | null)[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, query] of set.queries.entries()) {
        const start = performance.now();
        const hits = await peer.search(query.text, vectors[i]!, 10);
        latencies.push(performance.now() - start);
        if (round > 0) continue;
        const target = ids.get(query.documentKey);
        ranks.push(firstRelevantRank(hits, (hit: PeerHit) => hit.document_id === target && hit.text.includes(query.answerSpan)));
      }
    }
    latencies.sort((a, b) => a - b);
    return { peer: 'lancedb', rows: peer.rows, buildSeconds: peer.buildSeconds, recallAt10: recallAtK(ranks, 10), p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), ranks };
  } finally {
    db.close();
    rmSync(peerDir, { recursive: true, force: true });
  }
}

async function benchScale(dataDir: string, library: SpaceLibrary): Promise<{ scale: ScaleBench; library: SpaceLibrary }> {
  const set = generateLabelledSet({ seed: SEED });
  collectGarbage();
  const rssBeforeMb = rssMb();
  await library.createSpace('bench-scale');
  const started = performance.now();
  let nextReport = 10_000;
  const { ids, report } = await ingestDocuments(
    library, 'bench-scale', documentsUntil(set.documents, set.names, (chunks) => chunks >= TARGET_CHUNKS),
    (documents, chunks) => {
      if (chunks < nextReport) return;
      nextReport += 10_000;
      log(`  scale: ${chunks.toLocaleString('en-US')} chunks in ${documents.toLocaleString('en-US')} documents, ${((performance.now() - started) / 1000).toFixed(0)} s, RSS ${rssMb()} MB`);
    },
    'bulk',
  );
  log(`  scale: ${formatIngest(report)}`);
  // The first search after the ingest, before anything is warmed up: the vector index was filled by the writes.
  const firstStart = performance.now();
  await library.search('bench-scale', { query: set.queries[1]!.text, mode: 'hybrid', top_k: 10 });
  const firstSearchAfterIngestMs = performance.now() - firstStart;
  log(`  scale: first hybrid search after the ingest ${firstSearchAfterIngestMs.toFixed(0)} ms`);
  const warmStart = performance.now();
  await library.warmUp('bench-scale');
  const warmUpMs = performance.now() - warmStart;
  log(`  scale: indexes filled in ${warmUpMs.toFixed(0)} ms`);
  const modes = await runLabelledQueries(library, 'bench-scale', set, ids, { rounds: ROUNDS, onProgress: (line) => log(`  scale: ${line}`) });
  collectGarbage();
  const rss = rssMb();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  const memory = { rssBeforeMb, heapUsedMb: Math.round(heapUsed / 2 ** 20), arrayBuffersMb: Math.round(arrayBuffers / 2 ** 20) };
  let peer: PeerReport | null = null;
  if (flags.peer !== undefined) {
    log(`(d) peer: ${flags.peer}`);
    peer = await benchPeer(dataDir, set, ids);
    log(`  peer: ${JSON.stringify(peer)}`);
  }
  await library.close();
  const openStart = performance.now();
  const reopened = await openSpaceLibrary({ dataDir, embedder: builtinEmbedder() });
  const openMs = performance.now() - openStart;
  const searchStart = performance.now();
  await reopened.search('bench-scale', { query: set.queries[0]!.text, mode: 'hybrid', top_k: 10 });
  const firstSearchMs = performance.now() - searchStart;
  await reopened.warmUp('bench-scale');
  const fullMs = performance.now() - searchStart;
  const space = await reopened.getSpace('bench-scale');
  return {
    scale: { chunks: space.chunk_count, documents: space.document_count, ingest: report, rounds: ROUNDS, modes, fusion: fusionReport(modes), reopen: { openMs, firstSearchMs, fullMs }, warmUpMs, firstSearchAfterIngestMs, rssMb: rss, memory, peer },
    library: reopened,
  };
}

const machine = {
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  node: process.version,
  commit: commit(),
  loadAverageStart: loadavg().map((x) => Number(x.toFixed(2))),
  loadAverageEnd: [] as number[],
  startedAt: new Date().toISOString(),
};

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-spaces-'));
let evalReport: EvalReport;
let ingest: IngestBench;
let scale: ScaleBench | null = null;
try {
  let library = await openSpaceLibrary({ dataDir, embedder: builtinEmbedder() });
  try {
    log('(a) labelled set');
    const set = generateLabelledSet({ seed: SEED });
    evalReport = await evaluateSpace(library, set, { space: 'bench-eval', onProgress: (line) => log(`  eval: ${line}`) });
    await library.deleteSpace('bench-eval');
    log(`(b) ingest, ${INGEST_MB} MB`);
    ingest = await benchIngest(library, set.names);
    log(`  ingest medians: each ${ingest.each.mbPerSecond.toFixed(2)} MB/s, bulk ${ingest.bulk.mbPerSecond.toFixed(2)} MB/s; embedder alone ${ingest.embedder.mbPerSecond.toFixed(2)} MB/s`);
    if (TARGET_CHUNKS > 0) {
      log(`(c) scale, ${TARGET_CHUNKS.toLocaleString('en-US')} chunks`);
      const result = await benchScale(dataDir, library);
      scale = result.scale;
      library = result.library;
    }
  } finally {
    await library.close();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
machine.loadAverageEnd = loadavg().map((x) => Number(x.toFixed(2)));

if (flags.json) {
  console.log(JSON.stringify({ machine, eval: evalReport, ingest, scale }, null, 2));
} else {
  console.log(`Knowledge spaces bench: ${machine.cores} x ${machine.cpu}, Node ${machine.node}, commit ${machine.commit ?? '?'}, load average ${machine.loadAverageStart.join(' ')} -> ${machine.loadAverageEnd.join(' ')}`);
  console.log('\n(a) labelled set\n');
  console.log(formatEvalReport(evalReport));
  console.log(`\n(b) ingest with the built-in embedder: ${ingest.documents.toLocaleString('en-US')} documents, ${ingest.chunks.toLocaleString('en-US')} chunks, ${(ingest.bytes / 1e6).toFixed(2)} MB of text; median of ${INGEST_RUNS} runs [range]\n`);
  const range = (values: number[]) => `[${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}]`;
  for (const runs of [ingest.each, ingest.bulk]) {
    const what = runs.how === 'each' ? 'addDocument one after another' : 'addDocuments (bulk)';
    console.log(`${what}: ${runs.mbPerSecond.toFixed(2)} MB/s ${range(runs.runs.map((r) => r.mbPerSecond))}; ${runs.mbPerCpuSecond.toFixed(2)} MB per CPU second ${range(runs.runs.map((r) => r.mbPerCpuSecond))}`);
  }
  const embedRates = ingest.embedder.seconds.map((seconds) => ingest.embedder.bytes / 1e6 / seconds);
  console.log(`embedder alone (${ingest.embedder.dimensions} dimensions): ${(ingest.embedder.bytes / 1e6).toFixed(2)} MB of chunk text: ${ingest.embedder.mbPerSecond.toFixed(2)} MB/s ${range(embedRates)}`);
  if (scale) {
    console.log(`\n(c) ${scale.chunks.toLocaleString('en-US')} chunks in ${scale.documents.toLocaleString('en-US')} documents; ${scale.rounds} rounds of the labelled queries per mode\n`);
    const grown = ((scale.rssMb - scale.memory.rssBeforeMb) * 2 ** 20) / scale.chunks;
    console.log(`ingest: ${formatIngest(scale.ingest)}; RSS after the queries ${scale.rssMb} MB (${scale.memory.rssBeforeMb} MB before the space: ${grown.toFixed(0)} B a chunk); heap ${scale.memory.heapUsedMb} MB, ArrayBuffers ${scale.memory.arrayBuffersMb} MB`);
    console.log('');
    console.log(formatQualityTable(scale.modes));
    console.log('');
    console.log(formatKindTable(scale.modes));
    console.log(`\n${formatFusion(scale.fusion)}`);
    console.log(`\nfirst hybrid search after the ingest ${scale.firstSearchAfterIngestMs.toFixed(0)} ms; indexes filled after ingest in ${scale.warmUpMs.toFixed(0)} ms`);
    console.log(`reopen: openSpaceLibrary ${scale.reopen.openMs.toFixed(0)} ms, first hybrid search ${scale.reopen.firstSearchMs.toFixed(0)} ms, BM25 index full ${scale.reopen.fullMs.toFixed(0)} ms after it`);
    const peer = scale.peer;
    if (peer !== null) {
      const hybrid = scale.modes.find((m) => m.mode === 'hybrid')!;
      console.log(`\n(d) peer ${peer.peer}: ${peer.skipped ?? `${peer.rows} chunks, built in ${peer.buildSeconds!.toFixed(1)} s; hybrid recall@10 ${(peer.recallAt10! * 100).toFixed(1)}% vs svc ${(hybrid.recallAt10 * 100).toFixed(1)}%; p50/p99 ${peer.p50Ms!.toFixed(2)}/${peer.p99Ms!.toFixed(2)} ms vs svc ${hybrid.latency.p50Ms.toFixed(2)}/${hybrid.latency.p99Ms.toFixed(2)} ms`}`);
    }
  }
}
