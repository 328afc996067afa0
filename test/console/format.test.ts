import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCount, formatFigure, formatPercent } from '../../console/src/format.ts';
import { parseProblem } from '../../console/src/raw-json.ts';

test('formatFigure: two decimals at most, trailing zeros dropped, tiny values still visible', () => {
  assert.equal(formatFigure(117.14152222567635), '117.14');
  assert.equal(formatFigure(12.5), '12.5');
  assert.equal(formatFigure(3), '3');
  assert.equal(formatFigure(-0.98765, 3), '-0.988');
  assert.equal(formatFigure(0.000123), '0.00012');
  assert.equal(formatFigure(12345.678), '12,345.68');
  assert.equal(formatFigure(undefined), '—');
  assert.equal(formatFigure(Number.NaN), '—');
});

test('formatPercent and formatCount', () => {
  assert.equal(formatPercent(0.6834), '68.3 %');
  assert.equal(formatPercent(1), '100.0 %');
  assert.equal(formatPercent(0), '0.0 %');
  assert.equal(formatPercent(0.0001), '< 0.1 %');
  assert.equal(formatCount(1024), '1,024');
  assert.equal(formatCount(7.4), '7');
  assert.equal(formatCount(null), '—');
});

test('parseProblem: an object, or where and what is wrong in plain words', () => {
  assert.deepEqual(parseProblem('{"k": 3}'), { ok: true, problem: { k: 3 } });
  const bad = parseProblem('{\n  "k": 3,\n}');
  assert.equal(bad.ok, false);
  assert.match((bad as { message: string }).message, /^The raw JSON is not valid on line 3, column 1: /);
  assert.doesNotMatch((bad as { message: string }).message, /position/);
  assert.match((parseProblem('[1]') as { message: string }).message, /one object/);
  assert.match((parseProblem('  ') as { message: string }).message, /empty/);
});
