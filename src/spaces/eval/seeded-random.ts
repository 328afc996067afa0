/**
 * A small seeded PRNG for generated evaluation data: the labelled set must be the same text on
 * every machine and every run, so figures from different commits compare like with like.
 * mulberry32 is enough here (this is test data, not statistics); the seed's string form is
 * hashed first so nearby seeds give unrelated streams.
 */
export interface SeededRandom {
  /** A uniform double in [0, 1). */
  next(): number;
  /** A uniform integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** A new array with the same elements in a uniformly random order (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** true with probability `p`. */
  chance(p: number): boolean;
}

function hashSeed(seed: number | string): number {
  const text = `${typeof seed}:${seed}`;
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function seededRandom(seed: number | string): SeededRandom {
  let state = hashSeed(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
    chance(p: number): boolean {
      return next() < p;
    },
  };
}
