import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { roundDown, roundNearest, roundUp } from '../../../src/quantum/solvers/safe-rounding.ts';

/** The adjacent doubles, by their bit patterns. */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  const f = new Float64Array([x]);
  const i = new BigInt64Array(f.buffer);
  i[0] = i[0]! + (x >= 0 ? 1n : -1n);
  return f[0]!;
}
function nextDown(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const f = new Float64Array([x]);
  const i = new BigInt64Array(f.buffer);
  i[0] = i[0]! + (x > 0 ? -1n : 1n);
  return f[0]!;
}

describe('safe rounding', () => {
  it('rounds down below x where the naive floor(x·1000)/1000 lands above it', () => {
    const x = nextDown(0.117); // 0.11699999999999999
    assert.ok(Math.floor(x * 1000) / 1000 > x, 'the naive floor is the case this guards against');
    assert.equal(roundDown(x, 3), 0.116);
    assert.equal(roundUp(x, 3), 0.117);
  });

  it('rounds up above x where the naive ceil(x·1000)/1000 lands below it', () => {
    const x = nextUp(0.043); // 0.043000000000000003
    assert.ok(Math.ceil(x * 1000) / 1000 < x);
    assert.equal(roundUp(x, 3), 0.044);
    assert.equal(roundDown(x, 3), 0.043);
  });

  it('keeps a value that is already a multiple (the naive floor drops 1.001 to 1)', () => {
    assert.equal(Math.floor(1.001 * 1000) / 1000, 1);
    for (const x of [1.001, 1.003, 0.117, 0.043, 2, 0, 123.456]) {
      assert.equal(roundDown(x, 3), x);
      assert.equal(roundUp(x, 3), x);
      assert.equal(roundNearest(x, 3), x);
    }
  });

  it('does not read floating noise as the neighbouring multiple: it rounds the double it is given', () => {
    assert.equal(roundDown(2.0000000001, 3), 2);
    assert.equal(roundUp(2.0000000001, 3), 2.001);
    assert.equal(roundNearest(2.0000000001, 3), 2);
    assert.equal(roundDown(1.9999999999, 3), 1.999);
    assert.equal(roundUp(1.9999999999, 3), 2);
    assert.equal(roundNearest(1.9999999999, 3), 2);
  });

  it('handles negatives without a negative zero, and halves round up', () => {
    assert.equal(roundDown(-0.0001, 3), -0.001);
    assert.ok(Object.is(roundUp(-0.0001, 3), 0));
    assert.ok(Object.is(roundNearest(-0.0001, 3), 0));
    assert.ok(Object.is(roundDown(-0, 3), 0));
    assert.equal(roundNearest(0.25, 1), 0.3);
    assert.equal(roundNearest(-0.25, 1), -0.2);
    assert.equal(roundNearest(2.5, 0), 3);
  });

  it('leaves values alone that a double cannot hold finer than the grid, and non-finite ones', () => {
    assert.equal(roundDown(1e300, 3), 1e300);
    assert.equal(roundUp(-1e300, 3), -1e300);
    assert.equal(roundDown(Infinity, 3), Infinity);
    assert.ok(Number.isNaN(roundUp(NaN, 3)));
  });

  it('refuses a number of decimals it cannot honour', () => {
    for (const d of [-1, 1.5, 16, NaN]) assert.throws(() => roundDown(1, d), RangeError);
  });

  it('property: down ≤ x ≤ up, each the tightest multiple on its side, nearest the closer of the two', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.integer({ min: 0, max: 6 }), (x, d) => {
        const s = 10 ** d;
        const down = roundDown(x, d);
        const up = roundUp(x, d);
        const near = roundNearest(x, d);
        assert.ok(down <= x && x <= up, `${down} ≤ ${x} ≤ ${up}`);
        const k = Math.round(down * s);
        assert.equal(down, k / s, 'down is a multiple');
        assert.ok((k + 1) / s > x, `a larger multiple than ${down} is ≤ ${x}`);
        const j = Math.round(up * s);
        assert.equal(up, j / s, 'up is a multiple');
        assert.ok((j - 1) / s < x, `a smaller multiple than ${up} is ≥ ${x}`);
        assert.ok(j - k <= 1, 'at most one step apart');
        assert.ok(near === down || near === up);
        assert.ok(Math.abs(x - near) <= Math.abs(x - (near === down ? up : down)));
      }),
      { numRuns: 5000 },
    );
  });

  it('property: the doubles next to every multiple of 0.001 round to the right side', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), (k) => {
        const m = k / 1000;
        assert.equal(roundDown(m, 3), m);
        assert.equal(roundUp(m, 3), m);
        assert.equal(roundDown(nextDown(m), 3), (k - 1) / 1000);
        assert.equal(roundUp(nextUp(m), 3), (k + 1) / 1000);
      }),
      { numRuns: 5000 },
    );
  });
});
