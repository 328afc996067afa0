import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_RANK_TICKS, rankTicks } from '../../console/src/histogram-ticks.ts';

test('histogram rank ticks: at most 20, evenly every ⌈k/20⌉-th bar, the first always', () => {
  assert.deepEqual(rankTicks(5), [0, 1, 2, 3, 4]);
  assert.deepEqual(rankTicks(20), [...Array(20).keys()]);
  assert.deepEqual(rankTicks(21), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
  assert.deepEqual(rankTicks(0), []);
  for (let k = 1; k <= 256; k++) {
    const ticks = rankTicks(k);
    const step = Math.ceil(k / MAX_RANK_TICKS);
    assert.ok(ticks.length <= MAX_RANK_TICKS, `k=${k}: ${ticks.length}`);
    assert.equal(ticks[0], 0);
    assert.ok(ticks.every((t, i) => t === i * step && t < k), `k=${k}`);
  }
});

test('ticksThatFit: on a 390 px phone the 32 ranks of a route histogram leave room for each label', async () => {
  const { ticksThatFit, rankLabelWidth } = await import('../../console/src/histogram-ticks.ts');
  // A 390 px screen leaves about 260 px of plot once the y-axis and padding are taken.
  const ticks = ticksThatFit(32, 260, rankLabelWidth(32));
  const pitch = 260 / 32;
  const gap = Math.min(...ticks.slice(1).map((t, i) => (t - ticks[i]!) * pitch));
  assert.ok(gap >= rankLabelWidth(32), `${gap} px between ticks, ${rankLabelWidth(32)} needed`);
  assert.equal(ticks[0], 0);
  // A wide plot keeps the old limit of 20.
  assert.ok(ticksThatFit(256, 650, rankLabelWidth(256)).length <= 20);
});
