import { BestSlots } from './top-k-heap.ts';
import type { VectorHit, VectorIndex } from './vector-index.ts';

const INITIAL_CAPACITY = 1024;

/**
 * Exact nearest neighbours by scanning every vector: one contiguous Float32Array, rows kept
 * dense by moving the last row into a removed one. Exact recall, no build time; the baseline
 * any approximate index has to beat (bench/spaces-vector-index.ts).
 */
export class ExactVectorIndex implements VectorIndex {
  readonly dimensions: number;
  #rows: Float32Array;
  #ids: Int32Array;
  #slotOf = new Map<number, number>();
  #size = 0;

  constructor(dimensions: number) {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`vector index: bad dimension ${dimensions}`);
    this.dimensions = dimensions;
    this.#rows = new Float32Array(INITIAL_CAPACITY * dimensions);
    this.#ids = new Int32Array(INITIAL_CAPACITY);
  }

  get size(): number {
    return this.#size;
  }

  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void {
    const d = this.dimensions;
    for (const { id, vector } of entries) {
      if (vector.length !== d) throw new RangeError(`vector index: vector of ${vector.length} entries, index holds ${d}`);
      let slot = this.#slotOf.get(id);
      if (slot === undefined) {
        if (this.#size === this.#ids.length) this.#grow();
        slot = this.#size++;
        this.#slotOf.set(id, slot);
        this.#ids[slot] = id;
      }
      this.#rows.set(vector, slot * d);
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
        this.#rows.copyWithin(slot * d, last * d, last * d + d);
        this.#ids[slot] = movedId;
        this.#slotOf.set(movedId, slot);
      }
    }
  }

  search(query: Float32Array, k: number, accept?: (id: number) => boolean): VectorHit[] {
    const d = this.dimensions;
    if (query.length !== d) throw new RangeError(`vector index: query of ${query.length} entries, index holds ${d}`);
    if (k <= 0 || this.#size === 0) return [];
    const best = new BestSlots(k);
    const rows = this.#rows;
    for (let slot = 0; slot < this.#size; slot++) {
      if (accept !== undefined && !accept(this.#ids[slot]!)) continue;
      let dot = 0;
      const base = slot * d;
      for (let j = 0; j < d; j++) dot += rows[base + j]! * query[j]!;
      best.offer(dot, slot);
    }
    const held = best.held();
    const hits: VectorHit[] = [];
    for (let i = 0; i < held.slots.length; i++) hits.push({ id: this.#ids[held.slots[i]!]!, similarity: held.scores[i]! });
    return hits.sort((a, b) => b.similarity - a.similarity);
  }

  #grow(): void {
    const capacity = this.#ids.length * 2;
    const rows = new Float32Array(capacity * this.dimensions);
    rows.set(this.#rows);
    const ids = new Int32Array(capacity);
    ids.set(this.#ids);
    this.#rows = rows;
    this.#ids = ids;
  }
}
