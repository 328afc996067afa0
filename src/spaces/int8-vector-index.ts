import { columnScanModule, WASM_MAX_PAGES, WASM_PAGE, wasmPages, type ColumnScanExports } from './column-scan-kernel.ts';
import { grownCapacity } from './grown-capacity.ts';
import { quantizeQuery, sparseQuery, type SparseQuery } from './int8-query.ts';
import { BestSlots } from './top-k-heap.ts';
import type { StoredVectors, VectorHit, VectorIndex } from './vector-index.ts';

/** The first page's rows, doubling from here: a row writes into every column (1,024 rows: ~400 KB touched for one passage; 64: 24 KB). */
const INITIAL_CAPACITY = 64;
/**
 * Rows live in pages of this many (a power of two), so a growing space never copies the rows it
 * holds: the arrays used to grow by a quarter past 65,536 rows, and at a million chunks copying
 * every row so far at each grow took 7.1 s of the event loop during a bulk ingest (a CPU profile:
 * docs/BENCHMARKS.md) and held old and new arrays at once. A page of 16,384 rows is 6.4 MB of
 * columns at 384 dimensions and its scan's accumulators (64 KB) stay in the core's cache. The
 * first page doubles until it is full.
 */
const PAGE_ROWS = 16_384;
/**
 * The coarse scan hands this many more candidates than k to the exact rescoring, so that a true
 * neighbour the 7-bit rounding moved a few places down still makes it back.
 */
const RESCORE_MARGIN = 32;
/**
 * A filtered search first takes the nearest 16 k of all rows and filters those; only when fewer
 * than k of them pass (a filter passing less than roughly 1 in 16) does it call accept on every
 * id and score just the accepted rows.
 */
const FILTER_WIDENING = 16;
/** The fine rows' scale: each row's largest component is ±FINE_MAX (16 bits). */
const FINE_MAX = 32_767;
/** The coarse rows' scale: ±COARSE_MAX, stored as value + COARSE_OFFSET (1 to 127: the kernel's 7-bit operand). */
const COARSE_MAX = 63;
const COARSE_OFFSET = 64;

export interface Int8VectorIndexOptions {
  /** The scan kernel; null forces the JS scan (tests compare the two; runtimes without relaxed SIMD get it). */
  kernel?: WebAssembly.Module | null;
  /** Rows a page holds (a power of two, at least 16): for tests that want many pages from few rows. */
  pageRows?: number;
  /**
   * Where the float vectors are kept (the space's store): given, the index keeps no 16-bit rows
   * and rescores its candidates from the vectors read back through it, exactly.
   */
  storedVectors?: StoredVectors;
}

/**
 * Nearest neighbours by an exact scan of 7-bit columns and a rescoring of the best k + 32.
 *
 * Each vector is kept scaled by its largest component (which a cosine ignores) as 7-bit values in
 * columns (dimension j of every row in a page side by side) in a WebAssembly memory the kernel
 * scans (wasm/column-scan.as.ts), reading only the columns of the query's nonzero dimensions: a
 * fifth of the bytes for the built-in embedder's questions, every column for a model's dense
 * query. 7 bits because the kernel's relaxed-SIMD dot product is exact and the same on every
 * platform only when one operand's top bit is clear. The best k + 32 are then rescored against
 * the float query: from 16-bit rows the index keeps (row-major: one read a candidate; within about
 * 1e-5 of float32), or, given `storedVectors` (the space's store), from the stored vectors, exactly,
 * keeping no rows (768 B a vector at 384 dimensions). An index behind a graph keeps its rows: it
 * rescores 1,024+ candidates a search (hnsw-vector-index.ts). docs/spaces.md has the figures.
 *
 * Where the kernel does not compile, a JS scan computes the same scores bit for bit (integer
 * sums, one f32 product), so the same rows come back. Ids are any safe integers (held in a
 * Float64Array), so every SQLite row id up to 2^53. One WebAssembly memory per index bounds it
 * to 4 GiB of columns: about 10.9 million vectors of 384 dimensions. Each memory reserves address
 * space (V8: ~8 GiB of a process's 128 TiB), so about 16,000 indexes can be alive at once in one
 * process: the daemon holds one per space searched since it started.
 */
export class Int8VectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #kernel: ColumnScanExports | null;
  readonly #memory: WebAssembly.Memory;
  #bytes: Uint8Array;
  #floats: Float32Array;
  readonly #pageRows: number;
  /** log2(#pageRows): a slot's page is slot >> #pageShift. */
  readonly #pageShift: number;
  /** Bytes of a full page in the memory: its columns, then each row's 1 / |coarse row| as f32. */
  readonly #pageSpan: number;
  /** Where the kernel's scratch lies in the memory: the query's columns and weights, the accumulators, the rows found and their scores. */
  readonly #scratch: { columns: number; weights: number; acc: number; outRows: number; outScores: number };
  /** Where the pages start, after the scratch. */
  readonly #pagesBase: number;
  /** Rows page 0 has room for: doubles from INITIAL_CAPACITY while it is the only page, then #pageRows. */
  #firstStride: number;
  #pageCount = 1;
  /** The fine rows, page by page (row-major, #pageRows rows a page; the first page doubles); null with storedVectors. */
  readonly #fine: Int16Array[] | null;
  readonly #stored: StoredVectors | null;
  /** Per row: the float value of one unit of its fine row (empty with storedVectors). */
  #step: Float32Array;
  #ids: Float64Array;
  #slotOf = new Map<number, number>();
  #size = 0;

  constructor(dimensions: number, options: Int8VectorIndexOptions = {}) {
    const kernel = options.kernel === undefined ? columnScanModule() : options.kernel;
    const pageRows = options.pageRows ?? PAGE_ROWS;
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`vector index: bad dimension ${dimensions}`);
    if (!Number.isInteger(pageRows) || pageRows < 16 || (pageRows & (pageRows - 1)) !== 0) throw new RangeError(`vector index: page of ${pageRows} rows is not a power of two of at least 16`);
    this.dimensions = dimensions;
    this.#pageRows = pageRows;
    this.#pageShift = Math.log2(pageRows);
    this.#pageSpan = pageRows * (dimensions + 4);
    const groups = Math.ceil(dimensions / 4);
    const columns = 0;
    const weights = columns + groups * 16;
    const acc = weights + groups * 16;
    const outRows = acc + (pageRows + 16) * 4;
    const outScores = outRows + pageRows * 4;
    this.#scratch = { columns, weights, acc, outRows, outScores };
    this.#pagesBase = align16(outScores + pageRows * 4);
    this.#firstStride = Math.min(INITIAL_CAPACITY, pageRows);
    this.#memory = new WebAssembly.Memory({ initial: wasmPages(this.#pagesBase + this.#firstStride * (dimensions + 4)), maximum: WASM_MAX_PAGES });
    this.#bytes = new Uint8Array(this.#memory.buffer);
    this.#floats = new Float32Array(this.#memory.buffer);
    this.#kernel = kernel === null ? null : (new WebAssembly.Instance(kernel, { env: { memory: this.#memory } }).exports as unknown as ColumnScanExports);
    this.#stored = options.storedVectors ?? null;
    this.#fine = this.#stored === null ? [new Int16Array(this.#firstStride * dimensions)] : null;
    this.#step = new Float32Array(this.#stored === null ? this.#firstStride : 0);
    this.#ids = new Float64Array(this.#firstStride);
  }

  get size(): number {
    return this.#size;
  }

  /** Whether scans run in the WebAssembly kernel (false: in JS, same results, slower). */
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
      const row = slot & (this.#pageRows - 1);
      const fineRow = this.#fine?.[page];
      const fineBase = row * d;
      const stride = this.#stride(page);
      const columns = this.#columnsAt(page) + row;
      // Locals, not the private fields, in the loops: they run 384 times a vector.
      const bytes = this.#bytes;
      let max = 0;
      for (let j = 0; j < d; j++) {
        const a = Math.abs(vector[j]!);
        if (a > max) max = a;
      }
      if (!(max > 0 && max < Infinity)) {
        fineRow?.fill(0, fineBase, fineBase + d);
        for (let j = 0; j < d; j++) bytes[columns + j * stride] = COARSE_OFFSET;
        if (fineRow !== undefined) this.#step[slot] = 0;
        this.#floats[this.#invNormAt(page) / 4 + row] = 0;
        continue;
      }
      const fineScale = FINE_MAX / max;
      const coarseScale = COARSE_MAX / max;
      let norm = 0;
      for (let j = 0; j < d; j++) {
        const coarse = Math.round(vector[j]! * coarseScale);
        bytes[columns + j * stride] = coarse + COARSE_OFFSET;
        norm += coarse * coarse;
      }
      if (fineRow !== undefined) {
        for (let j = 0; j < d; j++) fineRow[fineBase + j] = Math.round(vector[j]! * fineScale);
        this.#step[slot] = 1 / fineScale;
      }
      this.#floats[this.#invNormAt(page) / 4 + row] = 1 / Math.sqrt(norm);
    }
  }

  remove(ids: Iterable<number>): void {
    const d = this.dimensions;
    for (const id of ids) {
      const slot = this.#slotOf.get(id);
      if (slot === undefined) continue;
      this.#slotOf.delete(id);
      const last = --this.#size;
      if (slot === last) continue;
      const movedId = this.#ids[last]!;
      const toPage = slot >> this.#pageShift, to = slot & (this.#pageRows - 1);
      const fromPage = last >> this.#pageShift, from = last & (this.#pageRows - 1);
      if (this.#fine !== null) {
        this.#fine[toPage]!.set(this.#fine[fromPage]!.subarray(from * d, from * d + d), to * d);
        this.#step[slot] = this.#step[last]!;
      }
      const bytes = this.#bytes;
      const toColumns = this.#columnsAt(toPage) + to, toStride = this.#stride(toPage);
      const fromColumns = this.#columnsAt(fromPage) + from, fromStride = this.#stride(fromPage);
      for (let j = 0; j < d; j++) bytes[toColumns + j * toStride] = bytes[fromColumns + j * fromStride]!;
      this.#floats[this.#invNormAt(toPage) / 4 + to] = this.#floats[this.#invNormAt(fromPage) / 4 + from]!;
      this.#ids[slot] = movedId;
      this.#slotOf.set(movedId, slot);
    }
  }

  has(id: number): boolean {
    return this.#slotOf.has(id);
  }

  /** Every id held, in slot order (for finding which ones a loaded graph lacks). */
  ids(): Float64Array {
    return this.#ids.slice(0, this.#size);
  }

  /** The held row of `id` as int8 (scaled to ±127), or undefined: what an approximate index builds from. */
  coarseRow(id: number): Int8Array | undefined {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return undefined;
    const d = this.dimensions;
    const page = slot >> this.#pageShift;
    const at = slot & (this.#pageRows - 1);
    const row = new Int8Array(d);
    if (this.#fine !== null) {
      const fine = this.#fine[page]!;
      for (let j = 0; j < d; j++) row[j] = Math.round(fine[at * d + j]! * 127 / FINE_MAX);
    } else {
      const columns = this.#columnsAt(page) + at;
      const stride = this.#stride(page);
      for (let j = 0; j < d; j++) row[j] = Math.round((this.#bytes[columns + j * stride]! - COARSE_OFFSET) * 127 / COARSE_MAX);
    }
    return row;
  }

  /**
   * Exact-enough similarities (the same 16-bit rescoring a scan ends with) of the held ones among
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
    // A zero query is orthogonal to everything.
    if (quantizeQuery(query, q) === 0) return this.#firstAccepted(k, accept);
    const sparse = sparseQuery(q);
    const depth = k + RESCORE_MARGIN;

    if (accept === undefined) return this.#rescore(query, this.#nearestSlots(sparse, Math.min(depth, size)), k);

    // In JS a scan costs far more than calling accept, so the JS scan goes straight to the accepted rows.
    if (this.#kernel !== null) {
      const wide = Math.min(size, Math.max(depth, k * FILTER_WIDENING));
      const passing: number[] = [];
      for (const slot of this.#nearestSlots(sparse, wide)) {
        if (accept(this.#ids[slot]!)) passing.push(slot);
        if (passing.length === depth) break;
      }
      // k passing among the nearest `wide` are the nearest k that pass; fewer are all there are when `wide` covered every row.
      if (passing.length >= k || wide === size) return this.#rescore(query, passing, k);
    }

    // A narrow filter: score only the accepted rows.
    const best = new BestSlots(depth);
    for (let slot = 0; slot < size; slot++) {
      if (!accept(this.#ids[slot]!)) continue;
      best.offer(this.#score(sparse, slot), slot);
    }
    return this.#rescore(query, best.bestFirst(), k);
  }

  /** The slots of the `count` nearest rows by 7-bit cosine, nearest first: every page scanned into one bounded heap. */
  #nearestSlots(query: SparseQuery, count: number): Int32Array {
    const best = new BestSlots(count);
    const kernel = this.#kernel;
    if (kernel === null) {
      for (let slot = 0; slot < this.#size; slot++) {
        best.offer(this.#score(query, slot), slot);
      }
      return best.bestFirst();
    }
    const { columns, weights, acc, outRows, outScores } = this.#scratch;
    const groups = Math.ceil(query.dims.length / 4);
    // The query's columns in groups of four, the last padded with its group's first column at weight 0 (read anyway, so cached).
    const view = new DataView(this.#memory.buffer);
    for (let g = 0; g < groups; g++) {
      for (let i = 0; i < 4; i++) {
        const at = g * 4 + i;
        const present = at < query.dims.length;
        view.setInt32(columns + at * 4, query.dims[present ? at : g * 4]!, true);
        const weight = present ? query.weights[at]! : 0;
        for (let copy = 0; copy < 4; copy++) view.setInt8(weights + g * 16 + copy * 4 + i, weight);
      }
    }
    const bias = -COARSE_OFFSET * query.weightSum;
    const floats = this.#floats;
    const rowsFound = new Int32Array(this.#memory.buffer, outRows, this.#pageRows);
    const pageRows = this.#pageRows;
    for (let page = 0, first = 0; first < this.#size; page++, first += pageRows) {
      const rows = Math.min(this.#stride(page), this.#size - first);
      const found = kernel.scanPage(this.#columnsAt(page), this.#stride(page), rows, this.#invNormAt(page), columns, weights, groups, bias, best.floor, acc, outRows, outScores);
      for (let i = 0; i < found; i++) best.offer(floats[outScores / 4 + i]!, first + rowsFound[i]!);
    }
    return best.bestFirst();
  }

  /** One row's coarse score, as the kernel computes it: the exact integer dot product, times 1 / |row| in f32. */
  #score(query: SparseQuery, slot: number): number {
    const page = slot >> this.#pageShift;
    const row = slot & (this.#pageRows - 1);
    const columns = this.#columnsAt(page) + row;
    const stride = this.#stride(page);
    const bytes = this.#bytes;
    const { dims, weights } = query;
    let dot = 0;
    for (let i = 0; i < dims.length; i++) dot += weights[i]! * (bytes[columns + dims[i]! * stride]! - COARSE_OFFSET);
    return Math.fround(dot * this.#floats[this.#invNormAt(page) / 4 + row]!);
  }

  /** Exact-enough similarities (16-bit rows, or the stored vectors, against the float query) for `slots`; the best k, best first. */
  #rescore(query: Float32Array, slots: ArrayLike<number>, k: number): VectorHit[] {
    const d = this.dimensions;
    const hits: VectorHit[] = [];
    if (this.#stored !== null) {
      const ids = Array.from(slots, (slot) => this.#ids[slot]!);
      const vectors = this.#stored(ids);
      for (const [i, id] of ids.entries()) {
        const vector = vectors[i];
        // Not in the store any more (deleted since the index learnt of it): not a result.
        if (vector === undefined || vector.length !== d) continue;
        let dot = 0;
        for (let j = 0; j < d; j++) dot += query[j]! * vector[j]!;
        hits.push({ id, similarity: dot });
      }
    } else {
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!;
        const fine = this.#fine![slot >> this.#pageShift]!;
        const base = (slot & (this.#pageRows - 1)) * d;
        let dot = 0;
        for (let j = 0; j < d; j++) dot += query[j]! * fine[base + j]!;
        hits.push({ id: this.#ids[slot]!, similarity: dot * this.#step[slot]! });
      }
    }
    hits.sort((a, b) => b.similarity - a.similarity);
    return hits.length > k ? hits.slice(0, k) : hits;
  }

  #firstAccepted(k: number, accept?: (id: number) => boolean): VectorHit[] {
    const hits: VectorHit[] = [];
    for (let slot = 0; slot < this.#size && hits.length < k; slot++) {
      const id = this.#ids[slot]!;
      if (accept === undefined || accept(id)) hits.push({ id, similarity: 0 });
    }
    return hits;
  }

  /** Rows a page's columns hold. */
  #stride(page: number): number {
    return page === 0 ? this.#firstStride : this.#pageRows;
  }

  /** Where a page's columns start in the memory. */
  #columnsAt(page: number): number {
    return this.#pagesBase + page * this.#pageSpan;
  }

  /** Where a page's per-row 1 / |coarse row| start in the memory (after its columns). */
  #invNormAt(page: number): number {
    return this.#columnsAt(page) + this.dimensions * this.#stride(page);
  }

  /** Rows the pages have room for. */
  #rowCapacity(): number {
    return this.#pageCount === 1 ? this.#firstStride : this.#pageCount * this.#pageRows;
  }

  /** Room for one more row: the only page doubles until it is a whole page, then a new page; the per-row numbers grow as one array each. */
  #grow(): void {
    const d = this.dimensions;
    if (this.#size === this.#rowCapacity()) {
      if (this.#pageCount === 1 && this.#firstStride < this.#pageRows) this.#widenFirstPage(Math.min(this.#firstStride * 2, this.#pageRows));
      else {
        this.#ensureMemory(this.#pagesBase + (this.#pageCount + 1) * this.#pageSpan, this.#size + 1);
        this.#pageCount++;
        this.#fine?.push(new Int16Array(this.#pageRows * d));
      }
    }
    if (this.#size === this.#ids.length) {
      const capacity = grownCapacity(this.#ids.length);
      if (this.#fine !== null) {
        const step = new Float32Array(capacity);
        step.set(this.#step);
        this.#step = step;
      }
      const ids = new Float64Array(capacity);
      ids.set(this.#ids);
      this.#ids = ids;
    }
  }

  /**
   * Gives the only page `stride` rows: the memory grows, then its 1 / |row| move up, then its
   * columns, last first, each to its new place (never over a column not moved yet).
   */
  #widenFirstPage(stride: number): void {
    const d = this.dimensions;
    const old = this.#firstStride;
    const base = this.#pagesBase;
    this.#ensureMemory(base + stride * (d + 4), this.#size + 1);
    const bytes = this.#bytes;
    bytes.copyWithin(base + d * stride, base + d * old, base + d * old + old * 4);
    for (let j = d - 1; j > 0; j--) bytes.copyWithin(base + j * stride, base + j * old, base + j * old + old);
    this.#firstStride = stride;
    if (this.#fine !== null) {
      const fine = new Int16Array(stride * d);
      fine.set(this.#fine[0]!);
      this.#fine[0] = fine;
    }
  }

  /** Grows the memory to at least `bytes` (and the views with it). */
  #ensureMemory(bytes: number, rows: number): void {
    const have = this.#memory.buffer.byteLength;
    if (bytes <= have) return;
    const pages = wasmPages(bytes) - have / WASM_PAGE;
    try {
      this.#memory.grow(pages);
    } catch {
      throw new RangeError(`vector index: no room for ${rows} vectors of ${this.dimensions} dimensions in one index (4 GiB of columns at most)`);
    }
    this.#bytes = new Uint8Array(this.#memory.buffer);
    this.#floats = new Float32Array(this.#memory.buffer);
  }
}

function align16(bytes: number): number {
  return (bytes + 15) & ~15;
}
