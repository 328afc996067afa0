import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cosSinInto } from '../../../src/quantum/simulator/fast-trig.ts';

const out = new Float64Array(2);
const check = (a: number, tolerance: number): void => {
  cosSinInto(a, out, 0);
  assert.ok(Math.abs(out[0]! - Math.cos(a)) <= tolerance, `cos(${a}): ${out[0]} vs ${Math.cos(a)}`);
  assert.ok(Math.abs(out[1]! - Math.sin(a)) <= tolerance, `sin(${a}): ${out[1]} vs ${Math.sin(a)}`);
};

test('cosSinInto agrees with Math.cos/Math.sin to a few ulps across the reduced range', () => {
  let seed = 12345;
  const next = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  for (let i = 0; i < 200_000; i++) {
    const scale = [1e-9, 1, 10, 1e3, 2 ** 19][i % 5]!;
    check((next() * 2 - 1) * scale, 4e-16);
  }
});

test('cosSinInto is exact where the answer is, and right at every quadrant boundary', () => {
  cosSinInto(0, out, 0);
  assert.deepEqual([...out], [1, 0]);
  cosSinInto(-0, out, 0);
  assert.equal(out[0], 1);
  for (let k = -40; k <= 40; k++) {
    const a = (k * Math.PI) / 4;
    for (const d of [-1e-12, 0, 1e-12]) check(a + d, 4e-16);
  }
});

test('cosSinInto defers to Math beyond the reduction limit, and passes NaN and ±Infinity through', () => {
  for (const a of [2 ** 19 + 0.5, -(2 ** 25), 1e300]) {
    cosSinInto(a, out, 0);
    assert.deepEqual([...out], [Math.cos(a), Math.sin(a)]);
  }
  for (const a of [NaN, Infinity, -Infinity]) {
    cosSinInto(a, out, 0);
    assert.ok(Number.isNaN(out[0]) && Number.isNaN(out[1]));
  }
});

test('cosSinInto writes at the offset it is given and nowhere else', () => {
  const wide = new Float64Array(4).fill(7);
  cosSinInto(1, wide, 1);
  assert.equal(wide[0], 7);
  assert.equal(wide[3], 7);
  assert.ok(Math.abs(wide[1]! - Math.cos(1)) < 4e-16 && Math.abs(wide[2]! - Math.sin(1)) < 4e-16);
});
