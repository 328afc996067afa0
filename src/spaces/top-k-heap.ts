/**
 * A bounded min-heap of the best k (score, slot) pairs, kept in two typed arrays: the vector
 * scans (through BestSlots, below) and BM25 (inline) push every candidate through it, so it
 * allocates nothing per candidate.
 */

/** Adds (value, slot) at position `at` (the heap's current size) and restores the heap. */
export function siftUp(score: Float64Array, slots: Int32Array, at: number, value: number, slot: number): void {
  let i = at;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (score[parent]! <= value) break;
    score[i] = score[parent]!;
    slots[i] = slots[parent]!;
    i = parent;
  }
  score[i] = value;
  slots[i] = slot;
}

/** Replaces the heap's smallest with (value, slot) and restores the heap. */
export function siftDown(score: Float64Array, slots: Int32Array, count: number, value: number, slot: number): void {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= count) break;
    const right = left + 1;
    const child = right < count && score[right]! < score[left]! ? right : left;
    if (score[child]! >= value) break;
    score[i] = score[child]!;
    slots[i] = slots[child]!;
    i = child;
  }
  score[i] = value;
  slots[i] = slot;
}

/** The best `capacity` (score, slot) pairs offered, in the heap above: a scan over many pages or calls keeps one. */
export class BestSlots {
  readonly capacity: number;
  readonly #score: Float64Array;
  readonly #slots: Int32Array;
  #filled = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.#score = new Float64Array(capacity);
    this.#slots = new Int32Array(capacity);
  }

  /** The lowest score held once full (-Infinity until then): a slot must beat it to get in. */
  get floor(): number {
    return this.#filled < this.capacity ? -Infinity : this.#score[0]!;
  }

  offer(score: number, slot: number): void {
    if (this.#filled < this.capacity) siftUp(this.#score, this.#slots, this.#filled++, score, slot);
    else if (score > this.#score[0]!) siftDown(this.#score, this.#slots, this.#filled, score, slot);
  }

  /** The pairs held, in heap order (not sorted): views, valid until the next offer. */
  held(): { slots: Int32Array; scores: Float64Array } {
    return { slots: this.#slots.subarray(0, this.#filled), scores: this.#score.subarray(0, this.#filled) };
  }

  /** The slots held, best first. */
  bestFirst(): Int32Array {
    const score = this.#score;
    const order = Array.from({ length: this.#filled }, (_, i) => i).sort((a, b) => score[b]! - score[a]!);
    return Int32Array.from(order, (i) => this.#slots[i]!);
  }
}
