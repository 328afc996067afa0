/**
 * The words around a measurement histogram's one "optimal" count (counts-histogram.tsx): what
 * its tooltip says it counts, and why no bar is optimal when none is. Plain functions, so they
 * are tested without a browser.
 */
import type { MeasurementCounts } from '../../src/quantum/solvers/measurement-counts.ts';
import { formatCount } from './format.ts';

/**
 * What "optimal" means for this histogram, said in the tooltip of its one optimal count:
 * `outcome` names what an optimal outcome is (route: an ordering as short as the enumerated
 * optimum); `answerShots` is `meta.optimal_count`, which counts something narrower (only the
 * returned answer's own bitstring) and is named in the tooltip so the two never read as rivals.
 */
export interface OptimalMeaning {
  outcome: string;
  answerShots: number;
  /** When `meta.optimal_count` is not simply that (several vehicles, a classical answer), how. */
  answerShotsNote?: string;
  /** Why no outcome can be optimal at all (Grover with no matching record), when so. */
  noneExist?: string;
}

/** The tooltip's words: what the count counts, and what `meta.optimal_count` counts instead. */
export function optimalTooltip(counts: MeasurementCounts, meaning: OptimalMeaning): string {
  return `Shots, of this circuit's ${formatCount(counts.shots)}, that measured an optimal outcome: ${meaning.outcome}. ` +
    `Counted over every outcome measured, listed as a bar or not. ` +
    `meta.optimal_count in the raw response (${formatCount(meaning.answerShots)}) is narrower: only the shots that measured the returned answer's own bitstring${meaning.answerShotsNote === undefined ? '' : ` (${meaning.answerShotsNote})`}.`;
}

/** Why the histogram has no optimal bar, in words; undefined when it has one. */
export function missingOptimalBar(counts: MeasurementCounts, noneExist?: string): string | undefined {
  if (counts.outcomes.some((o) => o.optimal)) return undefined;
  if (noneExist !== undefined) return `No bar is optimal: ${noneExist}.`;
  if (counts.optimal_count === 0) return `No bar is optimal: none of the ${formatCount(counts.shots)} shots measured an optimal outcome (it was never sampled).`;
  const least = Math.min(...counts.outcomes.map((o) => o.count));
  return `No optimal outcome is among the ${counts.outcomes.length} bars: the optimal outcomes took ${formatCount(counts.optimal_count)} shots in all, ` +
    `each fewer than the least frequent bar (${formatCount(least)}). Raise options.counts_top_k to list more outcomes.`;
}

