import { createRequire } from 'node:module';
import { grownCapacity } from './grown-capacity.ts';
import { BestSlots } from './top-k-heap.ts';
import type { VectorHit, VectorIndex } from './vector-index.ts';

/**
 * The part of usearch this index calls: its exact search, a SIMD brute-force scan in C++. Typed
 * here rather than imported so that a platform where its binary does not load still runs (on
 * the plain JS scan). usearch is a regular dependency, not an optional one: npm skips an
 * optional package whose `engines` (node >= 22) the installing Node does not meet, and `npm
 * install` often runs on an older system Node while the `node` package runs svc on Node 24.
 */
interface ExactSearchKernel {
  exactSearch(
    dataset: Int8Array, queries: Int8Array, dimensions: number, count: number, metric: string, threads?: number,
  ): { keys: BigUint64Array; distances: Float32Array };
  MetricKind: { Cos: string };
}

let kernel: ExactSearchKernel | null | undefined;

/** usearch's native kernel, or null where it cannot be loaded (no prebuilt binary, not installed). */
export function loadExactSearchKernel(): ExactSearchKernel | null {
  if (kernel === undefined) {
    try {
      const loaded = createRequire(import.meta.url)('usearch') as Partial<ExactSearchKernel>;
      kernel = typeof loaded.exactSearch === 'function' && loaded.MetricKind !== undefined ? (loaded as ExactSearchKernel) : null;
    } catch {
      kernel = null;
    }
  }
  return kernel;
}

const INITIAL_CAPACITY = 1024;
/**
 * Rows live in pages of this many (a power of two), so a growing space never copies the rows it
 * holds: the arrays used to grow by a quarter past 65,536 rows, and at a million chunks copying
 * every row so far at each grow took 7.1 s of the event loop during a bulk ingest (a CPU profile:
 * docs/BENCHMARKS.md) and held old and new arrays at once. 16,384 rows are 6 MB of coarse rows at
 * 384 dimensions: the last page's unused part stays small, and a scan's call per page (61 at a
 * million) costs nothing next to reading the rows. The first page doubles until it is full.
 */
const PAGE_ROWS = 16_384;
/**
 * The coarse scan hands this many more candidates than k to the exact rescoring, so that a true
 * neighbour the int8 rounding moved a few places down still makes it back.
 */
const RESCORE_MARGIN = 32;
/**
 * A filtered search first takes the nearest 16 k of all rows and filters those; only when fewer
 * than k of them pass (a filter passing less than roughly 1 in 16) does it call accept on every
 * id and scan just the accepted rows.
 */
const FILTER_WIDENING = 16;
/**
 * One thread: on the two-core machines this runs on, a second scan thread was slower under load
 * (it competes with the daemon's own work), and a 100k-vector scan takes a few ms.
 */
const KERNEL_THREADS = 1;

/**
 * Nearest neighbours by an int8 scan and an exact rescoring. Each row is scaled by 127 over its
 * largest component and rounded (the coarse row, which is all a scan reads: a quarter of the
 * bytes of float32, and bytes are what bounds a brute-force scan of 100k rows); the rounding's
 * remainder is kept at 1/256 of a step in a second int8 row. A search scans the coarse rows for
 * the nearest k + 32 by cosine (per-row scales cancel out of a cosine), in usearch's native SIMD
 * kernel where it loads and in JS otherwise, then rescores those from coarse and remainder
 * together (15 bits, similarity within about 1e-5 of float32) and keeps the best k.
 *
 * Every space's vectors are held here. Below HNSW_THRESHOLD this scan is the whole dense search;
 * above it hnsw-vector-index.ts puts a graph in front and rescores the graph's candidates here
 * (a first graph, built without this rescoring and from usearch's own int8 cast, lost recall on
 * the built-in embedder's vectors and took minutes to build at start: docs/BENCHMARKS.md).
 *
 * Ids are any safe integers (held in a Float64Array), so every SQLite row id up to 2^53.
 */
export class Int8VectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #kernel: ExactSearchKernel | null;
  readonly #pageRows: number;
  /** log2(#pageRows): a slot's page is slot >> #pageShift. */
  readonly #pageShift: number;
  /** The coarse rows, page by page (each page its own buffer: usearch reads a buffer from its start). */
  readonly #coarse: Int8Array[] = [];
  readonly #remainder: Int8Array[] = [];
  /** Per row: the float value of one unit of (coarse * 256 + remainder). */
  #step: Float32Array;
  /** Per row: the coarse row's length, for the JS scan (the kernel computes its own). */
  #norm: Float32Array;
  #ids: Float64Array;
  #slotOf = new Map<number, number>();
  #size = 0;
  /** Reused for gathering the accepted rows of a narrow filter. */
  #scratch = new Int8Array(0);

  /**
   * `kernel` null forces the JS scan (tests compare the two; platforms without usearch get it);
   * `pageRows` (a power of two) is for tests that want many pages from few rows.
   */
  constructor(dimensions: number, kernel: ExactSearchKernel | null = loadExactSearchKernel(), pageRows = PAGE_ROWS) {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`vector index: bad dimension ${dimensions}`);
    if (!Number.isInteger(pageRows) || pageRows < 1 || (pageRows & (pageRows - 1)) !== 0) throw new RangeError(`vector index: page of ${pageRows} rows is not a power of two`);
    this.dimensions = dimensions;
    this.#kernel = kernel;
    this.#pageRows = pageRows;
    this.#pageShift = Math.log2(pageRows);
    const first = Math.min(INITIAL_CAPACITY, pageRows);
    this.#coarse.push(new Int8Array(first * dimensions));
    this.#remainder.push(new Int8Array(first * dimensions));
    this.#step = new Float32Array(first);
    this.#norm = new Float32Array(first);
    this.#ids = new Float64Array(first);
  }

  get size(): number {
    return this.#size;
  }

  /** Whether scans run in the native kernel (false: in JS, same results, slower). */
  get native(): boolean {
    return this.#kernel !== null;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    const d = this.dimensions;
    for (const { id, vector } of entries) {
      if (!Number.isSafeInteger(id)) throw new RangeError(`vector index: id ${id} is not a safe integer`);
      if (vector.length !== d) throw new RangeError(`vector index: vector of ${vector.length} entries, index holds ${d}`);
      let slot = this.#slotOf.get(id);
      if (slot === undefined) {
        if (this.#size === this.#ids.length || this.#size === this.#rowCapacity()) this.#grow();
        slot = this.#size++;
        this.#slotOf.set(id, slot);
        this.#ids[slot] = id;
      }
      const page = slot >> this.#pageShift;
      const base = (slot & (this.#pageRows - 1)) * d;
      // Locals, not the private fields, in the loops: the loops run 384 times a vector.
      const coarseRow = this.#coarse[page]!;
      const remainderRow = this.#remainder[page]!;
      let max = 0;
      for (let j = 0; j < d; j++) {
        const a = Math.abs(vector[j]!);
        if (a > max) max = a;
      }
      if (!(max > 0 && max < Infinity)) {
        coarseRow.fill(0, base, base + d);
        remainderRow.fill(0, base, base + d);
        this.#step[slot] = 0;
        this.#norm[slot] = 0;
        continue;
      }
      const scale = 127 / max;
      let norm = 0;
      for (let j = 0; j < d; j++) {
        const exact = vector[j]! * scale;
        const coarse = Math.round(exact);
        coarseRow[base + j] = coarse;
        // The remainder is within ±0.5 of a step; 128/256 of it clamps to 127 (an error of 1/65536 of max).
        const rest = Math.round((exact - coarse) * 256);
        remainderRow[base + j] = rest > 127 ? 127 : rest < -128 ? -128 : rest;
        norm += coarse * coarse;
      }
      this.#step[slot] = 1 / (scale * 256);
      this.#norm[slot] = Math.sqrt(norm);
    }
  }

  remove(ids: Iterable<number>): void {
    const d = this.dimensions;
    for (const id of ids) {
      const slot = this.#slotOf.get(id);
      if (slot === undefined) continue;
      this.#slotOf.delete(id);
      const last = --this.#size;
      if (slot !== last) {
        const movedId = this.#ids[last]!;
        const [toPage, to] = this.#place(slot);
        const [fromPage, from] = this.#place(last);
        this.#coarse[toPage]!.set(this.#coarse[fromPage]!.subarray(from, from + d), to);
        this.#remainder[toPage]!.set(this.#remainder[fromPage]!.subarray(from, from + d), to);
        this.#step[slot] = this.#step[last]!;
        this.#norm[slot] = this.#norm[last]!;
        this.#ids[slot] = movedId;
        this.#slotOf.set(movedId, slot);
      }
    }
  }

  has(id: number): boolean {
    return this.#slotOf.has(id);
  }

  /** Every id held, in slot order (for finding which ones a loaded graph lacks). */
  ids(): Float64Array {
    return this.#ids.slice(0, this.#size);
  }

  /** The held row of `id` as int8 (the coarse row), or undefined; what an approximate index builds from. */
  coarseRow(id: number): Int8Array | undefined {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return undefined;
    const [page, at] = this.#place(slot);
    return this.#coarse[page]!.subarray(at, at + this.dimensions);
  }

  /**
   * Exact-enough similarities (the same 15-bit rescoring a scan ends with) of the held ones among
   * `ids` that `accept` passes, the best k, best first: how an approximate index's candidates are ranked.
   */
  rescoreIds(query: Float32Array, ids: Iterable<number>, k: number, accept?: (id: number) => boolean): VectorHit[] {
    if (query.length !== this.dimensions) throw new RangeError(`vector index: query of ${query.length} entries, index holds ${this.dimensions}`);
    const slots: number[] = [];
    for (const id of ids) {
      const slot = this.#slotOf.get(id);
      if (slot !== undefined && (accept === undefined || accept(id))) slots.push(slot);
    }
    return this.#rescore(query, slots, k);
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    const d = this.dimensions;
    if (query.length !== d) throw new RangeError(`vector index: query of ${query.length} entries, index holds ${d}`);
    const size = this.#size;
    if (k <= 0 || size === 0) return [];
    const q = new Int8Array(d);
    const qNorm = quantizeQuery(query, q);
    // A zero query is orthogonal to everything (the kernel would call it identical to a zero row).
    if (qNorm === 0) return this.#firstAccepted(k, accept);
    const depth = k + RESCORE_MARGIN;

    if (accept === undefined) return this.#rescore(query, this.#nearestSlots(q, qNorm, Math.min(depth, size)), k);

    // In JS a scan costs far more than calling accept, so the JS scan goes straight to the accepted rows.
    if (this.#kernel !== null) {
      const wide = Math.min(size, Math.max(depth, k * FILTER_WIDENING));
      const passing: number[] = [];
      for (const slot of this.#nearestSlots(q, qNorm, wide)) {
        if (accept(this.#ids[slot]!)) passing.push(slot);
        if (passing.length === depth) break;
      }
      // k passing among the nearest `wide` are the nearest k that pass; fewer are all there are when `wide` covered every row.
      if (passing.length >= k || wide === size) return this.#rescore(query, passing, k);
    }

    // A narrow filter: gather the accepted rows and scan only those.
    const accepted: number[] = [];
    for (let slot = 0; slot < size; slot++) if (accept(this.#ids[slot]!)) accepted.push(slot);
    if (accepted.length === 0) return [];
    if (this.#scratch.length < accepted.length * d) this.#scratch = new Int8Array(Math.max(accepted.length, INITIAL_CAPACITY) * d);
    const scratch = this.#scratch;
    const norms = new Float32Array(accepted.length);
    for (let i = 0; i < accepted.length; i++) {
      const [page, from] = this.#place(accepted[i]!);
      scratch.set(this.#coarse[page]!.subarray(from, from + d), i * d);
      norms[i] = this.#norm[accepted[i]!]!;
    }
    const best = new BestSlots(Math.min(depth, accepted.length));
    this.#scanInto(best, q, qNorm, scratch, norms, accepted.length, 0);
    return this.#rescore(query, Array.from(best.bestFirst(), (i) => accepted[i]!), k);
  }

  /** The slots of the `count` nearest rows by int8 cosine, nearest first: every page scanned into one bounded heap. */
  #nearestSlots(q: Int8Array, qNorm: number, count: number): Int32Array {
    const best = new BestSlots(count);
    const pageRows = this.#pageRows;
    for (let page = 0, first = 0; first < this.#size; page++, first += pageRows) {
      const rows = Math.min(pageRows, this.#size - first);
      this.#scanInto(best, q, qNorm, this.#coarse[page]!, this.#norm.subarray(first, first + rows), rows, first);
    }
    return best.bestFirst();
  }

  /** Offers the first `rows` rows of `matrix` (slot `first` + row) to `best` by int8 cosine. */
  #scanInto(best: BestSlots, q: Int8Array, qNorm: number, matrix: Int8Array, norms: Float32Array, rows: number, first: number): void {
    const d = this.dimensions;
    if (this.#kernel === null) {
      jsScanInto(best, matrix, norms, q, qNorm, d, rows, first);
      return;
    }
    // usearch's binding reads a typed array from the start of its buffer (it ignores a view's
    // byteOffset), so the matrix always goes in as a view at offset 0.
    const view = new Int8Array(matrix.buffer, 0, rows * d);
    const { keys, distances } = this.#kernel.exactSearch(view, q, d, Math.min(best.capacity, rows), this.#kernel.MetricKind.Cos, KERNEL_THREADS);
    for (let i = 0; i < keys.length; i++) best.offer(1 - distances[i]!, first + Number(keys[i]!));
  }

  /** Exact-enough similarities (15-bit rows against the float query) for `slots`; the best k, best first. */
  #rescore(query: Float32Array, slots: ArrayLike<number>, k: number): VectorHit[] {
    const d = this.dimensions;
    const hits: VectorHit[] = [];
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      const [page, base] = this.#place(slot);
      const coarse = this.#coarse[page]!;
      const remainder = this.#remainder[page]!;
      let dot = 0;
      for (let j = 0; j < d; j++) dot += query[j]! * (coarse[base + j]! * 256 + remainder[base + j]!);
      hits.push({ id: this.#ids[slot]!, similarity: dot * this.#step[slot]! });
    }
    hits.sort((a, b) => b.similarity - a.similarity);
    return hits.length > k ? hits.slice(0, k) : hits;
  }

  /** A slot's page and the offset of its row in that page's arrays. */
  #place(slot: number): [page: number, offset: number] {
    return [slot >> this.#pageShift, (slot & (this.#pageRows - 1)) * this.dimensions];
  }

  #firstAccepted(k: number, accept?: (id: number) => boolean): VectorHit[] {
    const hits: VectorHit[] = [];
    for (let slot = 0; slot < this.#size && hits.length < k; slot++) {
      const id = this.#ids[slot]!;
      if (accept === undefined || accept(id)) hits.push({ id, similarity: 0 });
    }
    return hits;
  }

  /** Rows the pages have room for. */
  #rowCapacity(): number {
    const pages = this.#coarse.length;
    return (pages - 1) * this.#pageRows + this.#coarse[pages - 1]!.length / this.dimensions;
  }

  /** Room for one more row: the only page doubles until it is a whole page, then a new page; the per-row numbers (16 bytes a row) grow as one array each. */
  #grow(): void {
    const d = this.dimensions;
    if (this.#size === this.#rowCapacity()) {
      const lastRows = this.#coarse[this.#coarse.length - 1]!.length / d;
      if (this.#coarse.length === 1 && lastRows < this.#pageRows) {
        const rows = Math.min(lastRows * 2, this.#pageRows);
        const coarse = new Int8Array(rows * d);
        coarse.set(this.#coarse[0]!);
        this.#coarse[0] = coarse;
        const remainder = new Int8Array(rows * d);
        remainder.set(this.#remainder[0]!);
        this.#remainder[0] = remainder;
      } else {
        this.#coarse.push(new Int8Array(this.#pageRows * d));
        this.#remainder.push(new Int8Array(this.#pageRows * d));
      }
    }
    if (this.#size === this.#ids.length) {
      const capacity = grownCapacity(this.#ids.length);
      const step = new Float32Array(capacity);
      step.set(this.#step);
      this.#step = step;
      const norm = new Float32Array(capacity);
      norm.set(this.#norm);
      this.#norm = norm;
      const ids = new Float64Array(capacity);
      ids.set(this.#ids);
      this.#ids = ids;
    }
  }
}

/** The query scaled to ±127 into `out`; returns the int8 query's length (0 for a zero or non-finite vector). */
export function quantizeQuery(query: Float32Array, out: Int8Array): number {
  const d = query.length;
  let max = 0;
  for (let j = 0; j < d; j++) {
    const a = Math.abs(query[j]!);
    if (a > max) max = a;
  }
  if (!(max > 0 && max < Infinity)) return 0;
  const scale = 127 / max;
  let norm = 0;
  for (let j = 0; j < d; j++) {
    const v = Math.round(query[j]! * scale);
    out[j] = v;
    norm += v * v;
  }
  return Math.sqrt(norm);
}

/**
 * The kernel's scan in JS, for platforms without it: the same int8 cosine of each of the first
 * `rows` rows of `matrix`, offered to `best` as slot `first` + row.
 */
function jsScanInto(best: BestSlots, matrix: Int8Array, norms: Float32Array, q: Int8Array, qNorm: number, d: number, rows: number, first: number): void {
  for (let row = 0; row < rows; row++) {
    const base = row * d;
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let j = 0;
    for (; j + 3 < d; j += 4) {
      a0 += matrix[base + j]! * q[j]!;
      a1 += matrix[base + j + 1]! * q[j + 1]!;
      a2 += matrix[base + j + 2]! * q[j + 2]!;
      a3 += matrix[base + j + 3]! * q[j + 3]!;
    }
    for (; j < d; j++) a0 += matrix[base + j]! * q[j]!;
    const norm = norms[row]!;
    const similarity = norm === 0 ? 0 : (a0 + a1 + a2 + a3) / (norm * qNorm);
    if (similarity > best.floor) best.offer(similarity, first + row);
  }
}
