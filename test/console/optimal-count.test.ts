import assert from 'node:assert/strict';
import { test } from 'node:test';
import { missingOptimalBar, optimalTooltip } from '../../console/src/optimal-count.ts';
import type { MeasurementCounts } from '../../src/quantum/solvers/measurement-counts.ts';

const outcome = (index: number, count: number, optimal: boolean) => ({ bitstring: index.toString(2).padStart(4, '0'), index, count, optimal });
const counts = (outcomes: ReturnType<typeof outcome>[], optimalCount: number): MeasurementCounts => ({
  qubits: 4, shots: 1024, distinct_outcomes: 16, other_count: 1024 - outcomes.reduce((s, o) => s + o.count, 0), optimal_count: optimalCount, outcomes,
});

test('missingOptimalBar: nothing to say when a bar is optimal; otherwise never sampled, below the listed bars, or none can exist', () => {
  assert.equal(missingOptimalBar(counts([outcome(3, 500, true), outcome(5, 20, false)], 500)), undefined);
  assert.equal(missingOptimalBar(counts([outcome(5, 20, false)], 0)), 'No bar is optimal: none of the 1,024 shots measured an optimal outcome (it was never sampled).');
  assert.match(missingOptimalBar(counts([outcome(5, 20, false), outcome(6, 4, false)], 3))!, /^No optimal outcome is among the 2 bars: the optimal outcomes took 3 shots in all, each fewer than the least frequent bar \(4\)\. Raise options\.counts_top_k/);
  assert.equal(missingOptimalBar(counts([outcome(5, 20, false)], 0), 'no record matches the pattern, so no outcome is optimal'), 'No bar is optimal: no record matches the pattern, so no outcome is optimal.');
});

test('optimalTooltip: what the count counts, and meta.optimal_count named with its value and its own meaning', () => {
  const words = optimalTooltip(counts([outcome(3, 7, true)], 7), { outcome: 'an ordering as short as the optimum', answerShots: 5, answerShotsNote: '0 for a route a classical method found' });
  assert.equal(words, "Shots, of this circuit's 1,024, that measured an optimal outcome: an ordering as short as the optimum. Counted over every outcome measured, listed as a bar or not. meta.optimal_count in the raw response (5) is narrower: only the shots that measured the returned answer's own bitstring (0 for a route a classical method found).");
});
