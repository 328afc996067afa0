/**
 * Vector index candidates for knowledge spaces, measured behind the VectorIndex seam: build time
 * from N vectors (what a space costs at daemon start), memory, search latency p50/p99 (k = 50),
 * recall@10 against the exact scan, the same with a filter passing ~10% of ids, and the cost of
 * replacing and removing vectors.
 *
 * Two kinds of data: random unit vectors (the hardest case for an approximate index: no
 * structure) and "text": hashed word, bigram and character-trigram features of generated
 * sentences, signed feature hashing, sublinear TF and an IDF weight, L2-normalized (what the
 * built-in embedder makes); queries are a few words taken from a chunk.
 *
 * Each candidate runs in its own child process, so memory is its own and one candidate's garbage
 * does not slow the next. Ground truth comes from ExactVectorIndex in the parent.
 *
 * Usage: npm run bench:spaces-vectors [-- --count 100000 --dims 256,384 --data text,random
 *        --queries 500 --k 50 --only exact-f32,usearch-hnsw-i8 --json]
 *        [--keep <dir> --candidates 1024,2048,4096]
 *
 * At a million vectors svc's graph takes ~15 minutes of one core to build, so `--keep <dir>`
 * keeps the dataset, its ground truth and the built graph in <dir> (one sub-folder per data kind
 * and dimensions) and a later run with the same flags loads them instead of making them again;
 * `--candidates` measures `hnsw-svc` once per count of graph candidates rescored, on the same graph.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ExactVectorIndex } from '../src/spaces/exact-vector-index.ts';
import { HnswVectorIndex } from '../src/spaces/hnsw-vector-index.ts';
import { Int8VectorIndex } from '../src/spaces/int8-vector-index.ts';
import type { VectorIndex } from '../src/spaces/vector-index.ts';
import { JsScanIndex, SqliteVecIndex, UsearchExactIndex, UsearchHnswIndex, loadOptional, type UsearchModule } from './spaces-vector-candidates.ts';

const { values: flags } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    dims: { type: 'string', default: '256,384' },
    data: { type: 'string', default: 'text,random' },
    queries: { type: 'string', default: '500' },
    k: { type: 'string', default: '50' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
    keep: { type: 'string' },
    candidates: { type: 'string' },
    // svc's graph built with other parameters than its defaults (links per node, depth while building).
    'graph-connectivity': { type: 'string' },
    'graph-expansion-add': { type: 'string' },
    // Internal: run one candidate on cached data and print its result as JSON.
    child: { type: 'string' },
    cache: { type: 'string' },
  },
});

const CANDIDATES = [
  'exact-f32', 'js-f32x4', 'js-i8', 'int8-js', 'int8-svc', 'hnsw-svc', 'usearch-exact-f32',
  'usearch-hnsw-f32', 'usearch-hnsw-i8', 'sqlite-vec-f32', 'sqlite-vec-i8', 'sqlite-vec-bit',
] as const;
type Candidate = (typeof CANDIDATES)[number];

const UPDATES = 1000;
const WARMUP = 20;
/** The filter of the filtered search: about one id in ten passes. */
const accept = (id: number): boolean => id % 10 === 3;

interface Dataset {
  count: number;
  dims: number;
  rows: Float32Array;
  queries: Float32Array;
  replacements: Float32Array;
}

interface CandidateResult {
  candidate: string;
  skipped?: string;
  /** For hnsw-svc: graph candidates rescored per search, links and build depth, and whether the graph was loaded from --keep (build_ms is then the load). */
  graph_candidates?: number;
  graph_connectivity?: number;
  graph_expansion_add?: number;
  graph_loaded?: boolean;
  build_ms?: number;
  memory_mb?: number;
  search_p50_ms?: number;
  search_p99_ms?: number;
  recall_at_10?: number;
  filtered_p50_ms?: number;
  filtered_p99_ms?: number;
  filtered_recall_at_10?: number;
  /** Filtered searches that returned fewer than k hits although at least k ids passed. */
  filtered_short?: number;
  update_ms_per_vector?: number;
  remove_ms_per_vector?: number;
  /** Removed ids that still came back from a search afterwards (must be 0). */
  removed_seen?: number;
}

// --- data ---------------------------------------------------------------------------------------

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normalizeRows(rows: Float32Array, dims: number): void {
  for (let base = 0; base < rows.length; base += dims) {
    let sum = 0;
    for (let j = 0; j < dims; j++) sum += rows[base + j]! ** 2;
    const inv = sum === 0 ? 0 : 1 / Math.sqrt(sum);
    for (let j = 0; j < dims; j++) rows[base + j]! *= inv;
  }
}

function randomRows(count: number, dims: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  const rows = new Float32Array(count * dims);
  // Box-Muller: Gaussian entries make the directions uniform on the sphere.
  for (let i = 0; i < rows.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(next() || 1e-12));
    const theta = 2 * Math.PI * next();
    rows[i] = r * Math.cos(theta);
    if (i + 1 < rows.length) rows[i + 1] = r * Math.sin(theta);
  }
  normalizeRows(rows, dims);
  return rows;
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Generated text: a Zipf vocabulary of made-up words, documents on one of many topics (a topic
 * favours its own words), chunks of 60-180 words. Features as the built-in embedder makes them.
 */
class TextCorpus {
  readonly dims: number;
  readonly #next: () => number;
  readonly #words: string[] = [];
  readonly #cumulative: Float64Array;
  readonly #topics: Int32Array[] = [];
  /** Each word's own features (unigram + character trigrams), precomputed: index, signed weight. */
  readonly #wordFeatures: { index: Int32Array; value: Float32Array }[] = [];
  readonly #idf: Float32Array;

  constructor(dims: number, seed: number) {
    this.dims = dims;
    this.#next = mulberry32(seed);
    const vocabulary = 30000;
    const letters = 'etaoinshrdlucmfwypvbgkjqxz';
    const seen = new Set<string>();
    while (this.#words.length < vocabulary) {
      const length = 2 + Math.floor(this.#next() * 9);
      let word = '';
      for (let i = 0; i < length; i++) word += letters[Math.floor(this.#next() ** 1.6 * letters.length)];
      if (seen.has(word)) continue;
      seen.add(word);
      this.#words.push(word);
    }
    this.#cumulative = new Float64Array(vocabulary);
    let total = 0;
    for (let r = 0; r < vocabulary; r++) this.#cumulative[r] = total += 1 / (r + 1);
    for (let r = 0; r < vocabulary; r++) this.#cumulative[r]! /= total;
    for (let t = 0; t < 2000; t++) this.#topics.push(Int32Array.from({ length: 40 }, () => 300 + Math.floor(this.#next() * (vocabulary - 300))));
    this.#idf = Float32Array.from({ length: vocabulary }, (_, r) => Math.log(2 + r / 20));
    for (const word of this.#words) {
      const features = new Map<number, number>();
      const add = (feature: string, weight: number) => {
        const h = fnv1a(feature);
        const index = h % dims;
        const sign = h & 0x80000000 ? -1 : 1;
        features.set(index, (features.get(index) ?? 0) + sign * weight);
      };
      add(`w:${word}`, 1);
      const padded = `<${word}>`;
      for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, 0.35);
      this.#wordFeatures.push({ index: Int32Array.from(features.keys()), value: Float32Array.from(features.values()) });
    }
  }

  #zipfWord(): number {
    const u = this.#next();
    let lo = 0, hi = this.#cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** A chunk's words: mostly the general Zipf distribution, a third from the document's topic. */
  chunkWords(topic: number, length: number): number[] {
    const favoured = this.#topics[topic]!;
    return Array.from({ length }, () => (this.#next() < 0.33 ? favoured[Math.floor(this.#next() * favoured.length)]! : this.#zipfWord()));
  }

  embed(words: number[], out: Float32Array, offset: number): void {
    const tf = new Map<number, number>();
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const [w, n] of tf) {
      const weight = (1 + Math.log(n)) * this.#idf[w]!;
      const { index, value } = this.#wordFeatures[w]!;
      for (let i = 0; i < index.length; i++) out[offset + index[i]!]! += value[i]! * weight;
    }
    for (let i = 0; i + 1 < words.length; i++) {
      const h = fnv1a(`b:${words[i]} ${words[i + 1]}`);
      out[offset + (h % this.dims)]! += (h & 0x80000000 ? -0.5 : 0.5) * Math.min(this.#idf[words[i]!]!, this.#idf[words[i + 1]!]!);
    }
  }

  random(): number {
    return this.#next();
  }

  topicCount(): number {
    return this.#topics.length;
  }
}

function makeDataset(kind: string, count: number, dims: number, queryCount: number): Dataset {
  if (kind === 'random') {
    return { count, dims, rows: randomRows(count, dims, 1), queries: randomRows(queryCount, dims, 2), replacements: randomRows(UPDATES, dims, 3) };
  }
  const corpus = new TextCorpus(dims, 11);
  const rows = new Float32Array(count * dims);
  const sourceRows = new Set<number>();
  while (sourceRows.size < Math.min(queryCount, count)) sourceRows.add(Math.floor(corpus.random() * count));
  const sources: number[][] = [];
  let topic = 0;
  for (let i = 0; i < count; i++) {
    // A document is 5-30 chunks on one topic.
    if (i === 0 || corpus.random() < 1 / 15) topic = Math.floor(corpus.random() * corpus.topicCount());
    const words = corpus.chunkWords(topic, 60 + Math.floor(corpus.random() * 120));
    corpus.embed(words, rows, i * dims);
    if (sourceRows.has(i)) sources.push(words);
  }
  normalizeRows(rows, dims);
  const queries = new Float32Array(queryCount * dims);
  for (let q = 0; q < queryCount; q++) {
    const words = sources[q % Math.max(1, sources.length)] ?? corpus.chunkWords(0, 60);
    const length = 2 + Math.floor(corpus.random() * 6);
    const start = Math.floor(corpus.random() * (words.length - length));
    corpus.embed(words.slice(start, start + length), queries, q * dims);
  }
  normalizeRows(queries, dims);
  const replacements = new Float32Array(UPDATES * dims);
  for (let i = 0; i < UPDATES; i++) corpus.embed(corpus.chunkWords(Math.floor(corpus.random() * corpus.topicCount()), 100), replacements, i * dims);
  normalizeRows(replacements, dims);
  return { count, dims, rows, queries, replacements };
}

function saveDataset(dir: string, data: Dataset): void {
  writeFileSync(join(dir, 'meta.json'), JSON.stringify({ count: data.count, dims: data.dims }));
  for (const part of ['rows', 'queries', 'replacements'] as const) writeFileSync(join(dir, `${part}.f32`), data[part]);
}

function loadDataset(dir: string): Dataset {
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as { count: number; dims: number };
  // A copy: readFileSync's buffer may sit at an offset that a Float32Array cannot start at.
  const floats = (part: string) => {
    const bytes = readFileSync(join(dir, `${part}.f32`));
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  };
  return { ...meta, rows: floats('rows'), queries: floats('queries'), replacements: floats('replacements') };
}

// --- measuring one candidate (in a child process) ----------------------------------------------

function idOf(row: number): number {
  return row + 1;
}

function* entries(rows: Float32Array, dims: number, count: number, id: (i: number) => number = idOf): Generator<{ id: number; vector: Float32Array }> {
  for (let i = 0; i < count; i++) yield { id: id(i), vector: rows.subarray(i * dims, (i + 1) * dims) };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * Resident memory once garbage is really gone: V8 frees large ArrayBuffers on a background
 * thread after a collection, so collect, wait, collect again.
 */
async function settledRss(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return process.memoryUsage().rss;
}

async function makeIndex(candidate: Candidate, dims: number, dir: string, graphCandidates: number | undefined): Promise<VectorIndex | string> {
  if (candidate === 'exact-f32') return new ExactVectorIndex(dims);
  if (candidate === 'js-f32x4') return new JsScanIndex(dims, 'f32x4');
  if (candidate === 'js-i8') return new JsScanIndex(dims, 'i8');
  if (candidate === 'int8-js') return new Int8VectorIndex(dims, { kernel: null });
  // svc's graph-fronted index with the graph from the first vector: what a space past HNSW_THRESHOLD searches.
  if (candidate === 'hnsw-svc') {
    return new HnswVectorIndex(dims, {
      threshold: 1,
      ...(graphCandidates === undefined ? {} : { candidates: graphCandidates }),
      ...(flags['graph-connectivity'] === undefined ? {} : { connectivity: Number(flags['graph-connectivity']) }),
      ...(flags['graph-expansion-add'] === undefined ? {} : { expansionAdd: Number(flags['graph-expansion-add']) }),
    });
  }
  if (candidate === 'int8-svc') {
    const index = new Int8VectorIndex(dims);
    return index.native ? index : 'the scan kernel (src/spaces/wasm/column-scan.wasm) did not compile here';
  }
  if (candidate.startsWith('usearch')) {
    const usearch = await loadOptional<{ default: UsearchModule }>('usearch');
    if (usearch === null) return 'usearch is not installed (npm install usearch)';
    if (candidate === 'usearch-exact-f32') return new UsearchExactIndex(usearch.default, dims);
    return new UsearchHnswIndex(usearch.default, dims, candidate === 'usearch-hnsw-i8' ? 'i8' : 'f32');
  }
  const sqliteVec = await loadOptional<{ getLoadablePath(): string }>('sqlite-vec');
  if (sqliteVec === null) return 'sqlite-vec is not installed (npm install sqlite-vec)';
  return new SqliteVecIndex(sqliteVec, dir, dims, candidate === 'sqlite-vec-f32' ? 'f32' : candidate === 'sqlite-vec-i8' ? 'i8' : 'bit');
}

async function runChild(candidate: Candidate, dir: string, k: number, graphCandidates: number | undefined): Promise<CandidateResult> {
  const data = loadDataset(dir);
  const truth = JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')) as { plain: number[][]; filtered: number[][] };
  const { count, dims } = data;
  const rssBefore = await settledRss();
  let start = performance.now();
  const index = await makeIndex(candidate, dims, dir, graphCandidates);
  if (typeof index === 'string') return { candidate, skipped: index };
  index.upsert(entries(data.rows, dims, count));
  // A graph kept by an earlier run with --keep is loaded; otherwise it is built as the daemon
  // builds it, in slices (here back to back), and kept for the next run.
  const graphFile = join(dir, index instanceof HnswVectorIndex ? `graph-${index.connectivity}-${index.expansionAdd}.usearch` : 'graph.usearch');
  const graphLoaded = index instanceof HnswVectorIndex && existsSync(graphFile) && index.load(graphFile) && index.pendingCount === 0;
  if (!graphLoaded && index.buildSome !== undefined) while (index.buildSome(1024) > 0);
  if (!graphLoaded && index instanceof HnswVectorIndex && index.save(`${graphFile}.part`)) renameSync(`${graphFile}.part`, graphFile);
  const buildMs = performance.now() - start;
  const memoryMb = ((await settledRss()) - rssBefore) / 2 ** 20;

  const queryCount = data.queries.length / dims;
  const query = (q: number) => data.queries.subarray(q * dims, (q + 1) * dims);
  const measure = (filter: ((id: number) => boolean) | undefined, expected: number[][]) => {
    for (let q = 0; q < Math.min(WARMUP, queryCount); q++) index.search(query(q), k, filter);
    const samples: number[] = [];
    let recall = 0;
    let short = 0;
    for (let q = 0; q < queryCount; q++) {
      const t = performance.now();
      const hits = index.search(query(q), k, filter);
      samples.push(performance.now() - t);
      const top = new Set(hits.slice(0, 10).map((h) => h.id));
      recall += expected[q]!.filter((id) => top.has(id)).length / expected[q]!.length;
      if (hits.length < k) short++;
    }
    samples.sort((a, b) => a - b);
    return { p50: percentile(samples, 50), p99: percentile(samples, 99), recall: recall / queryCount, short };
  };
  const plain = measure(undefined, truth.plain);
  const filtered = measure(accept, truth.filtered);

  // Replace UPDATES vectors spread over the ids, then remove UPDATES others, one call each.
  const stride = Math.floor(count / UPDATES);
  start = performance.now();
  index.upsert(entries(data.replacements, dims, UPDATES, (i) => idOf(i * stride)));
  if (index.buildSome !== undefined) while (index.buildSome(1024) > 0);
  const updateMs = (performance.now() - start) / UPDATES;
  const removed = Array.from({ length: UPDATES }, (_, i) => idOf(i * stride + 1));
  start = performance.now();
  index.remove(removed);
  const removeMs = (performance.now() - start) / UPDATES;
  // Search for the removed rows' own vectors: an index that keeps them finds them first.
  const gone = new Set(removed);
  let removedSeen = 0;
  for (let i = 0; i < 100; i++) {
    const row = i * 10 * stride + 1;
    for (const hit of index.search(data.rows.subarray(row * dims, (row + 1) * dims), 10)) if (gone.has(hit.id)) removedSeen++;
  }
  if (index instanceof SqliteVecIndex) index.close();
  return {
    candidate, ...(index instanceof HnswVectorIndex ? { graph_candidates: index.candidates, graph_connectivity: index.connectivity, graph_expansion_add: index.expansionAdd, graph_loaded: graphLoaded } : {}), build_ms: buildMs, memory_mb: memoryMb,
    search_p50_ms: plain.p50, search_p99_ms: plain.p99, recall_at_10: plain.recall,
    filtered_p50_ms: filtered.p50, filtered_p99_ms: filtered.p99, filtered_recall_at_10: filtered.recall, filtered_short: filtered.short,
    update_ms_per_vector: updateMs, remove_ms_per_vector: removeMs, removed_seen: removedSeen,
  };
}

// --- the parent ---------------------------------------------------------------------------------

function groundTruth(data: Dataset): { plain: number[][]; filtered: number[][] } {
  const exact = new ExactVectorIndex(data.dims);
  exact.upsert(entries(data.rows, data.dims, data.count));
  const plain: number[][] = [];
  const filtered: number[][] = [];
  for (let q = 0; q < data.queries.length / data.dims; q++) {
    const query = data.queries.subarray(q * data.dims, (q + 1) * data.dims);
    plain.push(exact.search(query, 10).map((h) => h.id));
    filtered.push(exact.search(query, 10, accept).map((h) => h.id));
  }
  return { plain, filtered };
}

if (flags.child !== undefined) {
  const result = await runChild(flags.child as Candidate, flags.cache!, Number(flags.k), flags.candidates === undefined ? undefined : Number(flags.candidates));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const count = Number(flags.count);
  const queryCount = Number(flags.queries);
  const k = Number(flags.k);
  const only = flags.only?.split(',') ?? [...CANDIDATES];
  const graphCandidates = flags.candidates?.split(',').map(Number) ?? [];
  for (const name of only) if (!(CANDIDATES as readonly string[]).includes(name)) throw new Error(`unknown candidate ${name}; known: ${CANDIDATES.join(', ')}`);
  const runs: { data: string; dims: number; count: number; results: CandidateResult[] }[] = [];
  const loadStart = loadavg();
  const self = fileURLToPath(import.meta.url);
  for (const kind of flags.data.split(',')) {
    for (const dims of flags.dims.split(',').map(Number)) {
      const dir = flags.keep === undefined ? mkdtempSync(join(tmpdir(), 'svc-bench-vectors-')) : join(flags.keep, `${kind}-${dims}-${count}-${queryCount}`);
      try {
        if (!existsSync(join(dir, 'truth.json'))) {
          mkdirSync(dir, { recursive: true });
          const data = makeDataset(kind, count, dims, queryCount);
          saveDataset(dir, data);
          writeFileSync(join(dir, 'truth.json'), JSON.stringify(groundTruth(data)));
        }
        const results: CandidateResult[] = [];
        const jobs = only.flatMap((candidate): { candidate: string; n: number | undefined }[] => (candidate === 'hnsw-svc' && graphCandidates.length > 0 ? graphCandidates.map((n) => ({ candidate, n })) : [{ candidate, n: undefined }]));
        for (const { candidate, n } of jobs) {
          let result: CandidateResult;
          try {
            const graphFlags = (['graph-connectivity', 'graph-expansion-add'] as const).flatMap((name) => (flags[name] === undefined ? [] : [`--${name}`, flags[name]]));
            const args = ['--expose-gc', self, '--child', candidate, '--cache', dir, '--k', String(k), ...(n === undefined ? [] : ['--candidates', String(n)]), ...graphFlags];
            const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
            result = JSON.parse(out.trim().split('\n').at(-1)!) as CandidateResult;
          } catch (error) {
            result = { candidate, skipped: `failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
          }
          results.push(result);
          if (!flags.json) process.stderr.write(`  ${kind} ${dims}d ${candidate}${n === undefined ? '' : `@${n}`}: ${result.skipped ?? `${result.search_p50_ms?.toFixed(2)} ms p50, recall@10 ${result.recall_at_10?.toFixed(3)}`}\n`);
        }
        runs.push({ data: kind, dims, count, results });
      } finally {
        if (flags.keep === undefined) rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, load_average_start: loadStart, load_average_end: loadavg() };
  if (flags.json) {
    console.log(JSON.stringify({ count, queries: queryCount, k, machine, runs }, null, 2));
  } else {
    const f = (v: number | undefined, digits = 2) => (v === undefined ? '' : v.toFixed(digits));
    console.log(`vector index candidates: ${count} vectors, ${queryCount} queries, k = ${k}; ${machine.cpus} x ${machine.cpu}; load average ${loadStart.map((l) => l.toFixed(2)).join(' ')} -> ${machine.load_average_end.map((l) => l.toFixed(2)).join(' ')}`);
    for (const run of runs) {
      console.log(`\n${run.data} vectors, ${run.dims} dims`);
      console.log('| candidate | build s | memory MB | p50 ms | p99 ms | recall@10 | filtered p50 ms | filtered p99 ms | filtered recall@10 | short | update ms | remove ms | removed seen |');
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const r of run.results) {
        if (r.skipped !== undefined) {
          console.log(`| ${r.candidate} | skipped: ${r.skipped} |`);
          continue;
        }
        console.log(`| ${r.candidate}${r.graph_candidates === undefined ? '' : `@${r.graph_candidates} M${r.graph_connectivity} ef${r.graph_expansion_add}${r.graph_loaded ? ' (graph loaded)' : ''}`} | ${f(r.build_ms! / 1000)} | ${f(r.memory_mb, 0)} | ${f(r.search_p50_ms)} | ${f(r.search_p99_ms)} | ${f(r.recall_at_10, 3)} | ${f(r.filtered_p50_ms)} | ${f(r.filtered_p99_ms)} | ${f(r.filtered_recall_at_10, 3)} | ${r.filtered_short} | ${f(r.update_ms_per_vector, 3)} | ${f(r.remove_ms_per_vector, 3)} | ${r.removed_seen} |`);
      }
    }
  }
}
