/** Rank labels a histogram's x-axis holds at most: up to 256 bars share about 700 px. */
export const MAX_RANK_TICKS = 20;

/**
 * The bars (0-based) whose rank is written under them when there are too many bars to label
 * each: every ⌈count / most⌉-th one from the first, so labels never overlap.
 */
export function rankTicks(count: number, most = MAX_RANK_TICKS): number[] {
  const step = Math.max(1, Math.ceil(count / Math.max(1, most)));
  const ticks: number[] = [];
  for (let i = 0; i < count; i += step) ticks.push(i);
  return ticks;
}

/** Horizontal room (CSS px) a rank label needs: its digits at about 7 px each in the axis' 12 px font, plus a gap. */
export function rankLabelWidth(count: number): number {
  return String(Math.max(1, count)).length * 7 + 12;
}

/** Horizontal room a label rotated by 45° needs from its neighbour: its line height over sin 45°, plus a gap. */
export const ROTATED_LABEL_PITCH = 20;

/**
 * The ticks that fit a plot `plotWidth` px wide (the drawing area, axes excluded) when each
 * label needs `labelWidth` px: as many as fit, never more than MAX_RANK_TICKS. On a 390 px
 * phone the route histogram's 32 ranks become every 4th, where they used to run together.
 */
export function ticksThatFit(count: number, plotWidth: number, labelWidth: number): number[] {
  const fit = Math.max(1, Math.floor(plotWidth / Math.max(1, labelWidth)));
  return rankTicks(count, Math.min(MAX_RANK_TICKS, fit));
}

/** Whether every bar can carry its own bitstring, rotated 45°, in a plot `plotWidth` px wide. */
export function bitstringsFit(count: number, plotWidth: number): boolean {
  return count * ROTATED_LABEL_PITCH <= plotWidth;
}
