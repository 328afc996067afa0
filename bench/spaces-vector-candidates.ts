/**
 * The vector indexes that lost (or are kept only as reference points) in
 * bench/spaces-vector-index.ts, behind the same VectorIndex seam so the bench measures each the
 * way the space library would call it. usearch and sqlite-vec are loaded by a dynamic import of a
 * name held in a variable, so that a checkout without them still type-checks and the bench skips
 * them with a note.
 */
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { siftDown, siftUp } from '../src/spaces/top-k-heap.ts';
import type { VectorHit, VectorIndex } from '../src/spaces/vector-index.ts';

/** The few parts of usearch the candidates use (its own types come with the package). */
export interface UsearchModule {
  Index: new (config: {
    dimensions: number; metric: string; quantization: string; connectivity: number; expansion_add: number; expansion_search: number; multi: boolean;
  }) => {
    add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
    search(vector: Float32Array, k: number, threads: number): { keys: BigUint64Array; distances: Float32Array };
    remove(keys: BigUint64Array): number | number[];
    contains(keys: BigUint64Array): boolean | boolean[];
    size(): number;
  };
  exactSearch(dataset: Float32Array | Int8Array, queries: Float32Array | Int8Array, dimensions: number, count: number, metric: string, threads?: number): {
    keys: BigUint64Array; distances: Float32Array;
  };
}

interface SqliteVecModule {
  getLoadablePath(): string;
}

export async function loadOptional<T>(name: string): Promise<T | null> {
  try {
    return (await import(name)) as T;
  } catch {
    return null;
  }
}

const INITIAL_CAPACITY = 1024;

/**
 * A JS scan like ExactVectorIndex with two variants: float32 with four accumulators (breaks the
 * add dependency chain), and int8 rows with a per-row scale (a quarter of the memory traffic).
 */
export class JsScanIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #int8: boolean;
  #f32: Float32Array;
  #i8: Int8Array;
  #scale: Float32Array;
  #ids: Float64Array;
  #slotOf = new Map<number, number>();
  #size = 0;

  constructor(dimensions: number, mode: 'f32x4' | 'i8') {
    this.dimensions = dimensions;
    this.#int8 = mode === 'i8';
    this.#f32 = new Float32Array(this.#int8 ? 0 : INITIAL_CAPACITY * dimensions);
    this.#i8 = new Int8Array(this.#int8 ? INITIAL_CAPACITY * dimensions : 0);
    this.#scale = new Float32Array(INITIAL_CAPACITY);
    this.#ids = new Float64Array(INITIAL_CAPACITY);
  }

  get size(): number {
    return this.#size;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    const d = this.dimensions;
    for (const { id, vector } of entries) {
      let slot = this.#slotOf.get(id);
      if (slot === undefined) {
        if (this.#size === this.#ids.length) this.#grow();
        slot = this.#size++;
        this.#slotOf.set(id, slot);
        this.#ids[slot] = id;
      }
      if (this.#int8) {
        let max = 0;
        for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(vector[j]!));
        const s = max === 0 ? 1 : 127 / max;
        for (let j = 0; j < d; j++) this.#i8[slot * d + j] = Math.round(vector[j]! * s);
        this.#scale[slot] = 1 / s;
      } else {
        this.#f32.set(vector, slot * d);
      }
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
        const moved = this.#ids[last]!;
        if (this.#int8) this.#i8.copyWithin(slot * d, last * d, last * d + d);
        else this.#f32.copyWithin(slot * d, last * d, last * d + d);
        this.#scale[slot] = this.#scale[last]!;
        this.#ids[slot] = moved;
        this.#slotOf.set(moved, slot);
      }
    }
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    const d = this.dimensions;
    const top = new TopK(k);
    if (this.#int8) {
      let max = 0;
      for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(query[j]!));
      const s = max === 0 ? 1 : 127 / max;
      const q = Int8Array.from(query, (v) => Math.round(v * s));
      const rows = this.#i8;
      for (let slot = 0; slot < this.#size; slot++) {
        if (accept !== undefined && !accept(this.#ids[slot]!)) continue;
        const b = slot * d;
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (let j = 0; j < d; j += 4) {
          a0 += rows[b + j]! * q[j]!;
          a1 += rows[b + j + 1]! * q[j + 1]!;
          a2 += rows[b + j + 2]! * q[j + 2]!;
          a3 += rows[b + j + 3]! * q[j + 3]!;
        }
        top.push(((a0 + a1 + a2 + a3) * this.#scale[slot]!) / s, slot);
      }
    } else {
      const rows = this.#f32;
      for (let slot = 0; slot < this.#size; slot++) {
        if (accept !== undefined && !accept(this.#ids[slot]!)) continue;
        const b = slot * d;
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (let j = 0; j < d; j += 4) {
          a0 += rows[b + j]! * query[j]!;
          a1 += rows[b + j + 1]! * query[j + 1]!;
          a2 += rows[b + j + 2]! * query[j + 2]!;
          a3 += rows[b + j + 3]! * query[j + 3]!;
        }
        top.push(a0 + a1 + a2 + a3, slot);
      }
    }
    return top.hits((slot) => this.#ids[slot]!);
  }

  #grow(): void {
    const capacity = this.#ids.length * 2;
    const d = this.dimensions;
    if (this.#int8) {
      const i8 = new Int8Array(capacity * d);
      i8.set(this.#i8);
      this.#i8 = i8;
    } else {
      const f32 = new Float32Array(capacity * d);
      f32.set(this.#f32);
      this.#f32 = f32;
    }
    const scale = new Float32Array(capacity);
    scale.set(this.#scale);
    this.#scale = scale;
    const ids = new Float64Array(capacity);
    ids.set(this.#ids);
    this.#ids = ids;
  }
}

/** A bounded min-heap of (score, slot) pairs; hits() hands them out best first. */
class TopK {
  readonly #k: number;
  readonly #score: Float64Array;
  readonly #slot: Int32Array;
  #count = 0;

  constructor(k: number) {
    this.#k = k;
    this.#score = new Float64Array(k);
    this.#slot = new Int32Array(k);
  }

  push(value: number, slot: number): void {
    if (this.#count < this.#k) siftUp(this.#score, this.#slot, this.#count++, value, slot);
    else if (value > this.#score[0]!) siftDown(this.#score, this.#slot, this.#count, value, slot);
  }

  hits(idOf: (slot: number) => number): VectorHit[] {
    const hits: VectorHit[] = [];
    for (let i = 0; i < this.#count; i++) hits.push({ id: idOf(this.#slot[i]!), similarity: this.#score[i]! });
    return hits.sort((a, b) => b.similarity - a.similarity);
  }
}

/**
 * usearch's HNSW graph. usearch has no filtered search in its JS binding, so a filter widens
 * the search (4x, then 16x k) and falls back to an exact scan of a float copy of the accepted
 * rows, which the index keeps for that reason.
 */
export class UsearchHnswIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #index: InstanceType<UsearchModule['Index']>;
  readonly #exact: JsScanIndex;

  constructor(usearch: UsearchModule, dimensions: number, quantization: 'f32' | 'i8') {
    this.dimensions = dimensions;
    this.#index = new usearch.Index({
      dimensions, metric: 'cos', quantization, connectivity: 16, expansion_add: 128, expansion_search: 64, multi: false,
    });
    this.#exact = new JsScanIndex(dimensions, 'f32x4');
  }

  get size(): number {
    return this.#exact.size;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    const d = this.dimensions;
    const list = [...entries];
    if (list.length === 0) return;
    const keys = BigUint64Array.from(list, (e) => BigInt(e.id));
    // usearch's binding reads a typed array from its buffer's start (it ignores byteOffset),
    // so the rows go in through a fresh buffer.
    const rows = new Float32Array(list.length * d);
    list.forEach((e, i) => rows.set(e.vector, i * d));
    const present = this.#index.contains(keys);
    const replaced = keys.filter((_, i) => (Array.isArray(present) ? present[i] : present) === true);
    if (replaced.length > 0) this.#index.remove(replaced);
    this.#index.add(keys, rows, 0);
    this.#exact.upsert(list);
  }

  remove(ids: Iterable<number>): void {
    const list = [...ids];
    if (list.length === 0) return;
    this.#index.remove(BigUint64Array.from(list, (id) => BigInt(id)));
    this.#exact.remove(list);
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    const size = this.size;
    if (k <= 0 || size === 0) return [];
    const q = Float32Array.from(query);
    for (const widen of accept === undefined ? [1] : [4, 16]) {
      const want = Math.min(size, k * widen);
      const found = this.#index.search(q, want, 1);
      const hits: VectorHit[] = [];
      for (let i = 0; i < found.keys.length && hits.length < k; i++) {
        const id = Number(found.keys[i]!);
        if (accept !== undefined && !accept(id)) continue;
        hits.push({ id, similarity: 1 - found.distances[i]! });
      }
      if (hits.length === k || want === size) return hits;
    }
    return this.#exact.search(query, k, accept);
  }
}

/**
 * usearch's exactSearch (SIMD brute force in C++) over float32 rows kept in JS: the int8 index
 * (src/spaces/int8-vector-index.ts) without the quantization, to show what it buys.
 */
export class UsearchExactIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #usearch: UsearchModule;
  #rows: Float32Array;
  #ids: Float64Array;
  #slotOf = new Map<number, number>();
  #size = 0;

  constructor(usearch: UsearchModule, dimensions: number) {
    this.dimensions = dimensions;
    this.#usearch = usearch;
    this.#rows = new Float32Array(INITIAL_CAPACITY * dimensions);
    this.#ids = new Float64Array(INITIAL_CAPACITY);
  }

  get size(): number {
    return this.#size;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    for (const { id, vector } of entries) {
      let slot = this.#slotOf.get(id);
      if (slot === undefined) {
        if (this.#size === this.#ids.length) this.#grow();
        slot = this.#size++;
        this.#slotOf.set(id, slot);
        this.#ids[slot] = id;
      }
      this.#rows.set(vector, slot * this.dimensions);
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
        const moved = this.#ids[last]!;
        this.#rows.copyWithin(slot * d, last * d, last * d + d);
        this.#ids[slot] = moved;
        this.#slotOf.set(moved, slot);
      }
    }
  }

  /** Widens 16x under a filter; a narrower filter than that comes back short (counted by the bench). */
  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    const d = this.dimensions;
    const size = this.#size;
    if (k <= 0 || size === 0) return [];
    const rows = new Float32Array(this.#rows.buffer, 0, size * d);
    const want = Math.min(size, accept === undefined ? k : k * 16);
    const found = this.#usearch.exactSearch(rows, Float32Array.from(query), d, want, 'ip', 1);
    const hits: VectorHit[] = [];
    for (let i = 0; i < found.keys.length && hits.length < k; i++) {
      const id = this.#ids[Number(found.keys[i]!)]!;
      if (accept !== undefined && !accept(id)) continue;
      hits.push({ id, similarity: 1 - found.distances[i]! });
    }
    return hits;
  }

  #grow(): void {
    const capacity = this.#ids.length * 2;
    const rows = new Float32Array(capacity * this.dimensions);
    rows.set(this.#rows);
    this.#rows = rows;
    const ids = new Float64Array(capacity);
    ids.set(this.#ids);
    this.#ids = ids;
  }
}

/**
 * sqlite-vec's vec0 table in node:sqlite, on a real file: float32 (cosine), int8 (cosine on
 * per-row scaled int8) or bit (sign bits, Hamming). A filter widens k up to vec0's limit of
 * 4096; past that the candidate returns what it has (counted as short in the bench).
 */
export class SqliteVecIndex implements VectorIndex {
  readonly dimensions: number;
  readonly #db: DatabaseSync;
  readonly #kind: 'f32' | 'i8' | 'bit';
  readonly #insert;
  readonly #delete;
  readonly #search;
  readonly #count;

  constructor(sqliteVec: SqliteVecModule, dir: string, dimensions: number, kind: 'f32' | 'i8' | 'bit') {
    this.dimensions = dimensions;
    this.#kind = kind;
    this.#db = new DatabaseSync(join(dir, `vec-${kind}-${dimensions}.db`), { allowExtension: true });
    this.#db.loadExtension(sqliteVec.getLoadablePath());
    this.#db.exec('pragma journal_mode = wal; pragma synchronous = normal');
    const column = kind === 'f32' ? `float[${dimensions}] distance_metric=cosine` : kind === 'i8' ? `int8[${dimensions}] distance_metric=cosine` : `bit[${dimensions}]`;
    this.#db.exec(`create virtual table vectors using vec0(embedding ${column})`);
    const wrap = kind === 'f32' ? '?' : kind === 'i8' ? 'vec_int8(?)' : 'vec_quantize_binary(?)';
    this.#insert = this.#db.prepare(`insert into vectors(rowid, embedding) values (?, ${wrap})`);
    this.#delete = this.#db.prepare('delete from vectors where rowid = ?');
    this.#search = this.#db.prepare(`select rowid as id, distance from vectors where embedding match ${wrap} and k = ?`);
    this.#count = this.#db.prepare('select count(*) as n from vectors');
  }

  get size(): number {
    return Number((this.#count.get() as { n: number }).n);
  }

  #encode(vector: Float32Array): Uint8Array {
    if (this.#kind !== 'i8') return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
    let max = 0;
    for (const v of vector) max = Math.max(max, Math.abs(v));
    const s = max === 0 ? 1 : 127 / max;
    const q = Int8Array.from(vector, (v) => Math.round(v * s));
    return new Uint8Array(q.buffer);
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    this.#db.exec('begin');
    try {
      for (const { id, vector } of entries) {
        // vec0 takes only integer rowids, and node:sqlite binds a JS number as a REAL.
        this.#delete.run(BigInt(id));
        this.#insert.run(BigInt(id), this.#encode(vector));
      }
      this.#db.exec('commit');
    } catch (error) {
      this.#db.exec('rollback');
      throw error;
    }
  }

  remove(ids: Iterable<number>): void {
    this.#db.exec('begin');
    for (const id of ids) this.#delete.run(BigInt(id));
    this.#db.exec('commit');
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    if (k <= 0) return [];
    const encoded = this.#encode(query);
    const d = this.dimensions;
    for (const want of accept === undefined ? [k] : [k * 16, 4096]) {
      const rows = this.#search.all(encoded, Math.min(4096, want)) as { id: number; distance: number }[];
      const hits: VectorHit[] = [];
      for (const row of rows) {
        if (accept !== undefined && !accept(row.id)) continue;
        hits.push({ id: row.id, similarity: this.#kind === 'bit' ? 1 - (2 * row.distance) / d : 1 - row.distance });
        if (hits.length === k) break;
      }
      if (hits.length === k || rows.length < want || want >= 4096) return hits;
    }
    return [];
  }

  close(): void {
    this.#db.close();
  }
}
