import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS, RecentJobCount } from '../../src/telemetry/recent-job-count.ts';

test('the daily count covers the last 24 hours, to the minute, and forgets older jobs', () => {
  const count = new RecentJobCount();
  const start = Date.UTC(2026, 0, 1, 12, 0, 30);
  count.add(start);
  count.add(start + 1000);
  count.add(start + 60 * 60_000);
  assert.equal(count.count(start + 60 * 60_000), 3);
  // A day after the first two, they are out of the window; the third is not.
  assert.equal(count.count(start + DAY_MS + 60_000), 1);
  count.add(start + DAY_MS + 2 * 60_000);
  assert.equal(count.count(start + DAY_MS + 2 * 60_000), 2);
  assert.equal(count.count(start + 3 * DAY_MS), 0);
});
