import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyControlled1,
  applyCZ,
  applyDiagonalPhase,
  applyH,
  applyMatrix1,
  applyMixerX,
  applyPhase,
  applyRX,
  applyRY,
  applyRZ,
  applyRZZ,
  applySwap,
  applyX,
  applyY,
  applyZ,
  Circuit,
  MAT_X,
  matRX,
  probabilities,
  StateVector,
} from '../../../src/quantum/simulator/index.ts';
import { assertSameUpToPhase, assertStatesClose } from './helpers.ts';

/** A reproducible non-trivial state: RY/RZ on every qubit plus a few entanglers. */
function randomish(n: number, seed = 1): StateVector {
  const s = StateVector.zero(n);
  for (let q = 0; q < n; q++) {
    applyRY(s, q, 0.3 + 0.7 * q + seed);
    applyRZ(s, q, 1.1 * q - 0.4 * seed);
  }
  for (let q = 0; q + 1 < n; q++) applyControlled1(s, [q], q + 1, MAT_X);
  for (let q = 0; q < n; q++) applyRX(s, q, 0.2 * q + 0.1 * seed);
  return s;
}

test('zero and uniform states, little-endian qubit order', () => {
  const z = StateVector.zero(3);
  assert.equal(z.size, 8);
  assert.equal(z.re[0], 1);
  applyX(z, 1);
  assert.equal(z.re[0b010], 1, 'X on qubit 1 sets bit 1 of the index');
  assert.equal(z.re[0], 0);
  const u = StateVector.uniform(4);
  for (let i = 0; i < 16; i++) assert.equal(u.re[i], 0.25);
  assert.ok(Math.abs(u.norm2() - 1) < 1e-15);
  const c = u.clone();
  c.re[0] = 9;
  assert.equal(u.re[0], 0.25, 'clone does not share memory');
});

test('Bell state: H then CX gives (|00> + |11>)/√2', () => {
  const s = StateVector.zero(2);
  applyH(s, 0);
  applyControlled1(s, [0], 1, MAT_X);
  const p = probabilities(s);
  assert.deepEqual([...p].map((x) => Math.round(x * 1e12) / 1e12), [0.5, 0, 0, 0.5]);
  assert.ok(Math.abs(s.re[3]! - Math.SQRT1_2) < 1e-15);
});

test('GHZ state on 5 qubits via a circuit', () => {
  const c = new Circuit(5).h(0);
  for (let q = 1; q < 5; q++) c.cx(q - 1, q);
  const s = StateVector.zero(5);
  c.run(s);
  const p = probabilities(s);
  assert.ok(Math.abs(p[0]! - 0.5) < 1e-14);
  assert.ok(Math.abs(p[31]! - 0.5) < 1e-14);
  for (let i = 1; i < 31; i++) assert.ok(p[i]! < 1e-28, `index ${i}`);
});

test('HXH = Z on a generic state', () => {
  const a = randomish(4);
  const b = a.clone();
  applyH(a, 2);
  applyX(a, 2);
  applyH(a, 2);
  applyZ(b, 2);
  assertStatesClose(a, b, 1e-14);
});

test('CX = (I⊗H) CZ (I⊗H) and CX differs from CZ', () => {
  const a = randomish(3, 2);
  const b = a.clone();
  applyControlled1(a, [0], 2, MAT_X);
  applyH(b, 2);
  applyCZ(b, 0, 2);
  applyH(b, 2);
  assertStatesClose(a, b, 1e-14);
  const c = randomish(3, 2);
  applyCZ(c, 0, 2);
  assert.throws(() => assertStatesClose(a, c, 1e-6));
});

test('Toffoli flips the target only when both controls are 1', () => {
  for (let basis = 0; basis < 8; basis++) {
    const s = StateVector.zero(3);
    for (let q = 0; q < 3; q++) if ((basis >> q) & 1) applyX(s, q);
    applyControlled1(s, [0, 1], 2, MAT_X);
    const expected = (basis & 3) === 3 ? basis ^ 4 : basis;
    assert.equal(s.re[expected], 1, `basis ${basis}`);
  }
});

test('Y = iXZ, RX(π) = -iX, Phase(π) = Z, RZ(θ) = e^{-iθ/2} Phase(θ)', () => {
  const a = randomish(3, 3);
  const b = a.clone();
  applyY(a, 1);
  applyZ(b, 1);
  applyX(b, 1);
  // multiply b by i
  for (let k = 0; k < b.size; k++) {
    const r = b.re[k]!;
    b.re[k] = -b.im[k]!;
    b.im[k] = r;
  }
  assertStatesClose(a, b, 1e-14);

  const c = randomish(3, 4);
  const d = c.clone();
  applyRX(c, 0, Math.PI);
  applyX(d, 0);
  assertSameUpToPhase(c, d, 1e-14);

  const e = randomish(3, 5);
  const f = e.clone();
  applyPhase(e, 2, Math.PI);
  applyZ(f, 2);
  assertStatesClose(e, f, 1e-14);

  const g = randomish(3, 6);
  const h = g.clone();
  applyRZ(g, 1, 0.77);
  applyPhase(h, 1, 0.77);
  assertSameUpToPhase(g, h, 1e-14);
});

test('SWAP exchanges qubits and equals three CNOTs', () => {
  const a = randomish(4, 7);
  const b = a.clone();
  applySwap(a, 0, 3);
  applyControlled1(b, [0], 3, MAT_X);
  applyControlled1(b, [3], 0, MAT_X);
  applyControlled1(b, [0], 3, MAT_X);
  assertStatesClose(a, b, 1e-14);
  const s = StateVector.zero(4);
  applyX(s, 0);
  applySwap(s, 0, 3);
  assert.equal(s.re[8], 1);
});

test('RZZ(θ) = CX · RZ(θ) on target · CX', () => {
  const a = randomish(4, 8);
  const b = a.clone();
  applyRZZ(a, 1, 3, 0.9);
  applyControlled1(b, [1], 3, MAT_X);
  applyRZ(b, 3, 0.9);
  applyControlled1(b, [1], 3, MAT_X);
  assertStatesClose(a, b, 1e-14);
});

test('mixer = RX(2β) on every qubit; diagonal phase = per-element e^{-iγd}', () => {
  const a = randomish(5, 9);
  const b = a.clone();
  applyMixerX(a, 0.37);
  for (let q = 0; q < 5; q++) applyMatrix1(b, q, matRX(0.74));
  assertStatesClose(a, b, 1e-14);

  const diag = Float64Array.from({ length: 32 }, (_, z) => (z * 7) % 5);
  const c = randomish(5, 10);
  const re0 = c.re[13]!;
  const im0 = c.im[13]!;
  applyDiagonalPhase(c, diag, 0.5);
  const t = -0.5 * diag[13]!;
  assert.ok(Math.abs(c.re[13]! - (re0 * Math.cos(t) - im0 * Math.sin(t))) < 1e-15);
  assert.ok(Math.abs(c.im[13]! - (re0 * Math.sin(t) + im0 * Math.cos(t))) < 1e-15);
});

test('gates reject out-of-range and repeated qubits', () => {
  const s = StateVector.zero(2);
  assert.throws(() => applyH(s, 2), RangeError);
  assert.throws(() => applyControlled1(s, [1], 1, MAT_X), RangeError);
  assert.throws(() => applyRZZ(s, 0, 0, 1), RangeError);
});
