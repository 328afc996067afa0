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
