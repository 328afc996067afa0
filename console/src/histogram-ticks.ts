/** Rank labels a histogram's x-axis holds at most: up to 256 bars share about 700 px. */
export const MAX_RANK_TICKS = 20;

/**
 * The bars (0-based) whose rank is written under them when there are too many bars to label
 * each: every ⌈count / MAX_RANK_TICKS⌉-th one from the first, so labels never overlap.
 */
export function rankTicks(count: number, most = MAX_RANK_TICKS): number[] {
  const step = Math.max(1, Math.ceil(count / most));
  const ticks: number[] = [];
  for (let i = 0; i < count; i += step) ticks.push(i);
  return ticks;
}
