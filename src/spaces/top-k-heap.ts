/**
 * A bounded min-heap of the best k (score, slot) pairs, kept in two typed arrays: the vector
 * scans push every candidate through it, so it allocates nothing per candidate.
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
