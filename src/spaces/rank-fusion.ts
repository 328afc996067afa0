/** Reciprocal rank fusion's constant (Cormack et al. 2009): damps the weight of the very first ranks. */
export const RRF_K = 60;

export interface FusedItem<K> {
  key: K;
  score: number;
  /** The item's 1-based rank in each input list, null where it is absent. */
  ranks: (number | null)[];
}

/**
 * Reciprocal rank fusion: score = Σ over lists of 1 / (k + rank), rank 1-based. Only ranks
 * count, so lists whose scores are not comparable (BM25 and cosine, two spaces' BM25) fuse
 * fairly. Ties keep the order of first appearance (lists in order, ranks in order).
 */
export function fuseRanks<K>(lists: readonly (readonly K[])[], k = RRF_K): FusedItem<K>[] {
  const fused = new Map<K, FusedItem<K>>();
  lists.forEach((list, listIndex) => {
    list.forEach((key, index) => {
      let item = fused.get(key);
      if (item === undefined) {
        item = { key, score: 0, ranks: lists.map(() => null) };
        fused.set(key, item);
      }
      // A key repeated within one list counts at its best rank only.
      if (item.ranks[listIndex] !== null) return;
      item.ranks[listIndex] = index + 1;
      item.score += 1 / (k + index + 1);
    });
  });
  // Array.prototype.sort is stable: equal scores stay in first-appearance order.
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
