import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dayOf, monthOf } from '../../../src/accounts/store/energy-units.ts';

test('the day and month of a moment are its UTC ones, at the edges of days and months too, whatever was asked before', () => {
  const cases: [string, string, string][] = [
    ['2026-11-30T23:59:59.999Z', '2026-11-30', '2026-11'],
    ['2026-12-01T00:00:00.000Z', '2026-12-01', '2026-12'],
    ['2026-11-30T00:00:00.000Z', '2026-11-30', '2026-11'],
    ['2024-02-29T12:00:00.000Z', '2024-02-29', '2024-02'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31', '1969-12'],
    ['1970-01-01T00:00:00.000Z', '1970-01-01', '1970-01'],
  ];
  // Twice, in both orders: the kept day must never answer for another.
  for (const list of [cases, [...cases].reverse(), cases]) {
    for (const [iso, day, month] of list) {
      assert.equal(dayOf(new Date(iso)), day, iso);
      assert.equal(monthOf(new Date(iso)), month, iso);
      assert.equal(dayOf(new Date(iso)), day, `${iso} again`);
    }
  }
  assert.throws(() => dayOf(new Date(Number.NaN)), RangeError);
});
