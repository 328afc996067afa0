import { createRequire } from 'node:module';
import { quantizeQuery } from './int8-query.ts';
import { Int8VectorIndex } from './int8-vector-index.ts';
import type { VectorHit, VectorIndex, VectorIndexFactory, VectorIndexTraits } from './vector-index.ts';

/**
 * The part of usearch's Index class this file calls. Typed here rather than imported so that a
 * platform where its binary does not load still runs (on the exact scan). usearch is a regular
 * dependency, not an optional one: npm skips an optional package whose `engines` (node >= 22)
 * the installing Node does not meet, and `npm install` often runs on an older system Node while
 * the `node` package runs svc on Node 24.
 */
interface UsearchGraph {
  add(keys: BigUint64Array, vectors: Int8Array, threads?: number): void;
  search(vector: Int8Array, k: number, threads: number): { keys: BigUint64Array; distances: Float32Array };
  remove(keys: BigUint64Array): number | number[];
  contains(keys: BigUint64Array): boolean | boolean[];
  size(): number;
  save(path: string): void;
  load(path: string): void;
}
interface UsearchModule {
  Index: new (config: {
    dimensions: number; metric: string; quantization: string; connectivity: number; expansion_add: number; expansion_search: number; multi: boolean;
  }) => UsearchGraph;
}

let usearch: UsearchModule | null | undefined;

/** Whether usearch's graph loads here (false: every space is scanned exactly). */
export function usearchLoads(): boolean {
  return loadUsearch() !== null;
}

function loadUsearch(): UsearchModule | null {
  if (usearch === undefined) {
    try {
      const loaded = createRequire(import.meta.url)('usearch') as Partial<UsearchModule>;
      usearch = typeof loaded.Index === 'function' ? (loaded as UsearchModule) : null;
    } catch {
      usearch = null;
    }
  }
  return usearch;
}

/**
 * Below this many vectors a space is scanned exactly; from it on a graph answers. The int8 scan
 * takes 3.7 / 8.4 ms p50 / p99 at 100,000 vectors of 384 dimensions and grows with the count, so
 * about 17 ms p99 here; the graph costs 0.27 ms of an idle core per vector to build (more on busy
 * cores and on some data: docs/BENCHMARKS.md) and ~1 KB a vector more memory, which a space this
 * small does not need to pay.
 * Measured in docs/BENCHMARKS.md ("Knowledge spaces: vector index").
 */
export const HNSW_THRESHOLD = 200_000;
/**
 * Graph parameters, chosen on the built-in embedder's vectors (hashed features, not clustered:
 * the hard case): usearch's defaults (16 links, 64 deep) found 0.65–0.75 of the exact top 10;
 * 32 links and 200 deep while building found, with the graph's best 256 / 512 / 1,024 / 2,048
 * rescored exactly, 0.946 / 0.979 / 0.994 / 0.998 of it at 100,000 vectors (0.990 with 256 at
 * 30,000: the graph needs more candidates as it grows); building 64 / 128 deep was 4.5× / 1.35×
 * faster and found 0.977 / 0.988 with 1,024.
 */
const CONNECTIVITY = 32;
const EXPANSION_ADD = 200;
/**
 * Candidates taken from the graph and rescored from the exact rows (usearch searches max(this,
 * count) deep): 1,024 kept recall@10 at 0.994 at 100,000 vectors for 7.7 / 15.9 ms p50 / p99 on
 * two loaded cores, against 17.6 / 55.1 ms for the exact scan beside it. At 1,000,000 it finds
 * 0.950 in 8.2 / 11.9 ms (idle cores); reaching 0.98 there took 3,000–4,000 candidates (48 or 32
 * links), 23–28 ms p50, what the exact scan costs with recall 1, so more would buy nothing
 * (docs/BENCHMARKS.md, "Big spaces"). On the labelled set's questions at 1,000,000 it finds 0.61
 * (0.69 with hybrid search's BM25 hint), yet hybrid search finds 0.884 of their answers against
 * 0.892 with the exact scan as its dense half, at less than half the latency.
 */
const CANDIDATES = 1024;
/** Vectors not yet in the graph are rescored one by one; past this many a search scans everything instead. */
const PENDING_SCAN_LIMIT = 4096;
/** One graph thread: on the two-core machines this runs on, a second thread was slower under load (it competes with the daemon's own work). */
const GRAPH_THREADS = 1;

export interface HnswOptions {
  /** Vectors from which the graph is built and searched (HNSW_THRESHOLD unless told). */
  threshold?: number;
  /** Candidates a search takes from the graph to rescore (CANDIDATES unless told). */
  candidates?: number;
  /** Links per node and search depth while building (CONNECTIVITY, EXPANSION_ADD unless told: for measuring others). */
  connectivity?: number;
  expansionAdd?: number;
}

/**
 * An approximate nearest-neighbour index for big spaces: usearch's HNSW graph over each vector's
 * int8 row, candidates rescored from the exact rows an Int8VectorIndex keeps beside it.
 *
 * The earlier attempt (bench/spaces-vector-index.ts, 2026-11-23) lost recall and took minutes
 * to build at daemon start. What is different here:
 *  - recall: the graph is given svc's own int8 rows (each scaled by 127 over its largest
 *    component, which a cosine ignores) instead of usearch's cast of float32 to int8, which maps
 *    the small components of a 384-entry unit vector onto a handful of levels; 32 links, and 1,024
 *    candidates rescored exactly, so the graph only has to get the true top 10 into its top 1,024;
 *  - build time: the graph is built a batch at a time between other work (`buildSome`, driven by
 *    space-indexes.ts), never in one block, and saved in the data dir (`save`, `load`), so a
 *    daemon start loads it rather than building it; vectors not in the graph yet (pending) are
 *    rescored one by one, so a search never misses one while the graph catches up;
 *  - small spaces never get a graph: below the threshold every search is the exact scan;
 *  - filters: usearch's JS binding has no filtered search, so a filter that leaves fewer than k
 *    of the candidates falls back to the exact scan of the accepted rows.
 *
 * Deletes leave the graph at once (usearch marks them), and every candidate is checked against
 * the exact rows, so an id removed here never comes back even from a graph saved before it left.
 */
export class HnswVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly threshold: number;
  readonly candidates: number;
  readonly connectivity: number;
  readonly expansionAdd: number;
  readonly #exact: Int8VectorIndex;
  readonly #usearch: UsearchModule | null;
  #graph: UsearchGraph | null = null;
  /** Ids held but not in the graph yet, oldest first (a Set keeps insertion order). */
  readonly #pending = new Set<number>();
  /** Whether the graph changed since it was last saved or loaded. */
  #dirty = false;

  constructor(dimensions: number, options: HnswOptions = {}) {
    this.#exact = new Int8VectorIndex(dimensions);
    this.dimensions = dimensions;
    this.threshold = options.threshold ?? HNSW_THRESHOLD;
    this.candidates = options.candidates ?? CANDIDATES;
    this.connectivity = options.connectivity ?? CONNECTIVITY;
    this.expansionAdd = options.expansionAdd ?? EXPANSION_ADD;
    this.#usearch = loadUsearch();
  }

  get size(): number {
    return this.#exact.size;
  }

  /** Whether searches use the graph now (false: the exact scan). */
  get approximate(): boolean {
    return this.#graph !== null && this.#wantsGraph() && this.#pending.size <= PENDING_SCAN_LIMIT;
  }

  /** Vectors waiting for the graph (0 when it holds them all, or when the space is below the threshold). */
  get pendingCount(): number {
    return this.#wantsGraph() ? this.#pending.size : 0;
  }

  get dirty(): boolean {
    return this.#dirty;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    const list = Array.isArray(entries) ? (entries as { id: number; vector: Float32Array }[]) : [...entries];
    const replaced: number[] = [];
    for (const { id } of list) if (this.#exact.has(id) && !this.#pending.has(id)) replaced.push(id);
    this.#exact.upsert(list);
    if (replaced.length > 0) this.#removeFromGraph(replaced);
    for (const { id } of list) this.#pending.add(id);
  }

  remove(ids: Iterable<number>): void {
    const list = [...ids];
    this.#exact.remove(list);
    for (const id of list) this.#pending.delete(id);
    this.#removeFromGraph(list);
  }

  /**
   * Moves up to `count` pending vectors into the graph (creating it once the space reaches the
   * threshold); returns how many are still pending. A no-op below the threshold or without usearch.
   */
  buildSome(count: number): number {
    if (!this.#wantsGraph()) return 0;
    this.#graph ??= this.#newGraph();
    const ids: number[] = [];
    for (const id of this.#pending) {
      if (ids.length === count) break;
      ids.push(id);
    }
    if (ids.length > 0) {
      const d = this.dimensions;
      const rows = new Int8Array(ids.length * d);
      ids.forEach((id, i) => rows.set(this.#exact.coarseRow(id)!, i * d));
      this.#graph.add(BigUint64Array.from(ids, (id) => BigInt(id)), rows, GRAPH_THREADS);
      for (const id of ids) this.#pending.delete(id);
      this.#dirty = true;
    }
    return this.#pending.size;
  }

  /** Writes the graph to `path` (nothing when there is none); the caller renames it into place. */
  save(path: string): boolean {
    if (this.#graph === null) return false;
    this.#graph.save(path);
    this.#dirty = false;
    return true;
  }

  /**
   * Loads a graph saved for this space: the vectors it holds leave the pending set; ones it
   * lacks stay pending; ones it holds that have left the space since are removed. False (and
   * no graph) when the file cannot be read as one.
   */
  load(path: string): boolean {
    if (this.#usearch === null) return false;
    const graph = this.#newGraph();
    try {
      graph.load(path);
    } catch {
      return false;
    }
    const ids = this.#exact.ids();
    if (ids.length > 0) {
      const present = graph.contains(BigUint64Array.from(ids, (id) => BigInt(id)));
      const list = Array.isArray(present) ? present : [present];
      list.forEach((inGraph, i) => {
        if (inGraph) this.#pending.delete(ids[i]!);
      });
    }
    this.#graph = graph;
    this.#dirty = false;
    return true;
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean, alsoConsider?: readonly number[]): VectorHit[] {
    if (query.length !== this.dimensions) throw new RangeError(`vector index: query of ${query.length} entries, index holds ${this.dimensions}`);
    if (k <= 0 || this.size === 0) return [];
    if (!this.approximate) return this.#exact.search(query, k, accept);
    const q = new Int8Array(this.dimensions);
    if (quantizeQuery(query, q) === 0) return this.#exact.search(query, k, accept);
    const found = this.#graph!.search(q, Math.min(Math.max(this.candidates, k), this.size), 1);
    const candidates = new Set<number>();
    for (let i = 0; i < found.keys.length; i++) {
      const key = found.keys[i]!;
      // usearch pads a short answer with the all-ones key.
      if (key !== 0xffff_ffff_ffff_ffffn) candidates.add(Number(key));
    }
    for (const id of this.#pending) candidates.add(id);
    if (alsoConsider !== undefined) for (const id of alsoConsider) candidates.add(id);
    const hits = this.#exact.rescoreIds(query, candidates, k, accept);
    // A filter that kept fewer than k of the candidates: the exact scan of what it accepts.
    if (accept !== undefined && hits.length < k) return this.#exact.search(query, k, accept);
    return hits;
  }

  #wantsGraph(): boolean {
    return this.#usearch !== null && this.size >= this.threshold;
  }

  #newGraph(): UsearchGraph {
    return new this.#usearch!.Index({
      dimensions: this.dimensions, metric: 'cos', quantization: 'i8', connectivity: this.connectivity, expansion_add: this.expansionAdd, expansion_search: this.candidates, multi: false,
    });
  }

  #removeFromGraph(ids: readonly number[]): void {
    if (this.#graph === null || ids.length === 0) return;
    this.#graph.remove(BigUint64Array.from(ids, (id) => BigInt(id)));
    this.#dirty = true;
  }
}

/**
 * The index a space gets unless told otherwise. Spaces whose queries are sparse (the built-in
 * embedder's) get the exact column scan at any size: it reads only the query's columns, which at
 * a million chunks takes about what the graph took, finds the exact top 10 where the graph found
 * 0.61 of it on questions, and costs no graph (~0.7 KB a chunk, a 10–16-minute build); it rescores
 * from the store's vectors (traits.storedVectors) rather than keep 16-bit rows. Spaces with
 * dense queries (model embedders) get the exact scan below HNSW_THRESHOLD vectors and the graph in
 * front of it from there (the exact scan throughout where usearch does not load).
 * Chosen by measurement: docs/BENCHMARKS.md, "Knowledge spaces: vector index" and "Big spaces".
 */
export const defaultVectorIndex: VectorIndexFactory = (dimensions: number, traits?: VectorIndexTraits) =>
  traits?.sparseQueries === true
    ? new Int8VectorIndex(dimensions, traits.storedVectors === undefined ? {} : { storedVectors: traits.storedVectors })
    : new HnswVectorIndex(dimensions);
