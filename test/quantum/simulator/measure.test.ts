import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyH,
  applyRY,
  cryptoRng,
  expectationDiagonal,
  mostLikely,
  probabilities,
  sampleCounts,
  seededRng,
  StateVector,
  topStates,
  toBitstring,
} from '../../../src/quantum/simulator/index.ts';

function skewedState(): StateVector {
  const s = StateVector.zero(3);
  applyRY(s, 0, 1.0);
  applyRY(s, 1, 2.2);
  applyH(s, 2);
  return s;
}

test('seeded RNG is reproducible, seed-sensitive and in [0, 1)', () => {
  const a = seededRng(42);
  const b = seededRng(42);
  const c = seededRng('42');
  const xs = Array.from({ length: 1000 }, () => a.next());
  const ys = Array.from({ length: 1000 }, () => b.next());
  const zs = Array.from({ length: 1000 }, () => c.next());
  assert.deepEqual(xs, ys);
  assert.notDeepEqual(xs, zs);
  for (const x of xs) assert.ok(x >= 0 && x < 1);
  const mean = xs.reduce((p, q) => p + q, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test('crypto RNG gives distinct values in [0, 1) across buffer refills', () => {
  const r = cryptoRng(16);
  const xs = Array.from({ length: 100 }, () => r.next());
  for (const x of xs) assert.ok(x >= 0 && x < 1);
  assert.equal(new Set(xs).size, 100);
});

test('seeded sampling is reproducible and matches the distribution (chi-square, fixed seed)', () => {
  const s = skewedState();
  const p = probabilities(s);
  const shots = 20000;
  const a = sampleCounts(s, shots, seededRng(7));
  const b = sampleCounts(s, shots, seededRng(7));
  assert.deepEqual([...a.entries()].sort(), [...b.entries()].sort());
  let total = 0;
  let chi2 = 0;
  for (let z = 0; z < 8; z++) {
    const observed = a.get(z) ?? 0;
    total += observed;
    const expected = p[z]! * shots;
    if (expected > 0) chi2 += (observed - expected) ** 2 / expected;
  }
  assert.equal(total, shots);
  // 7 degrees of freedom: P(χ² > 24.3) ≈ 0.001
  assert.ok(chi2 < 24.3, `chi2 ${chi2}`);
  // a wrong distribution (uniform) must fail the same statistic
  let chiUniform = 0;
  for (let z = 0; z < 8; z++) chiUniform += ((a.get(z) ?? 0) - shots / 8) ** 2 / (shots / 8);
  assert.ok(chiUniform > 100, `uniform chi2 ${chiUniform}`);
});

test('sampling a basis state always returns it; zero shots gives an empty map', () => {
  const s = StateVector.zero(4);
  s.re[0] = 0;
  s.re[11] = 1;
  assert.deepEqual([...sampleCounts(s, 500, seededRng(1))], [[11, 500]]);
  assert.equal(sampleCounts(s, 0, seededRng(1)).size, 0);
  assert.throws(() => sampleCounts(s, -1, seededRng(1)), RangeError);
});

test('probabilities, expectation, mostLikely, topStates, bitstrings', () => {
  const s = skewedState();
  const p = probabilities(s);
  assert.ok(Math.abs(p.reduce((x, y) => x + y, 0) - 1) < 1e-14);
  const diag = Float64Array.from({ length: 8 }, (_, z) => z);
  let e = 0;
  for (let z = 0; z < 8; z++) e += p[z]! * z;
  assert.ok(Math.abs(expectationDiagonal(s, diag) - e) < 1e-14);
  const best = mostLikely(s);
  for (let z = 0; z < 8; z++) assert.ok(p[z]! <= p[best]!);
  const top = topStates(s, 3);
  assert.equal(top.length, 3);
  assert.equal(top[0]!.index, best);
  assert.ok(top[0]!.probability >= top[1]!.probability && top[1]!.probability >= top[2]!.probability);
  assert.equal(toBitstring(6, 4), '0110');
});
