import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROW_BY_QUARTER_FROM, grownCapacity } from '../../src/spaces/grown-capacity.ts';

test('grownCapacity: doubles while small, then grows by a quarter, and never below what is needed', () => {
  assert.equal(grownCapacity(1024), 2048);
  assert.equal(grownCapacity(GROW_BY_QUARTER_FROM / 2), GROW_BY_QUARTER_FROM);
  assert.equal(grownCapacity(GROW_BY_QUARTER_FROM), GROW_BY_QUARTER_FROM + GROW_BY_QUARTER_FROM / 4);
  assert.equal(grownCapacity(100_001), 125_002);
  assert.equal(grownCapacity(1024, 5000), 5000);
  // From the indexes' first capacity to a million rows: always growing, never more than a fifth unused after a step.
  let capacity = 1024;
  while (capacity < 1_000_000) {
    const next = grownCapacity(capacity);
    assert.ok(next > capacity);
    if (capacity >= GROW_BY_QUARTER_FROM) assert.ok((next - capacity - 1) / next <= 0.2);
    capacity = next;
  }
});
