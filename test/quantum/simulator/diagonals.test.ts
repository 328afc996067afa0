import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  diagonalValue,
  isingDiagonal,
  maxCutDiagonal,
  prepareDiagonal,
  quboDiagonal,
} from '../../../src/quantum/simulator/index.ts';
import { randomEdges } from './helpers.ts';

const bit = (z: number, i: number): number => (z >> i) & 1;
const spin = (z: number, i: number): number => 1 - 2 * bit(z, i);

test('isingDiagonal matches brute force, including linear terms, constants and repeated pairs', () => {
  const n = 7;
  const quadratic = [
    { i: 0, j: 3, w: 1.5 },
    { i: 3, j: 0, w: -0.25 },
    { i: 2, j: 6, w: 2 },
    { i: 5, j: 1, w: -0.75 },
    { i: 4, j: 4, w: 0.5 },
  ];
  const linear = [{ i: 1, h: 0.3 }, { i: 6, h: -1.1 }, { i: 1, h: 0.2 }];
  const d = isingDiagonal(n, quadratic, linear, 3);
  for (let z = 0; z < 2 ** n; z++) {
    let v = 3;
    for (const t of linear) v += t.h * spin(z, t.i);
    for (const t of quadratic) v += t.w * spin(z, t.i) * spin(z, t.j);
    assert.ok(Math.abs(d[z]! - v) < 1e-12, `z=${z}: ${d[z]} vs ${v}`);
  }
});

test('quboDiagonal = xᵀQx + offset (asymmetric Q)', () => {
  const n = 6;
  const q = Float64Array.from({ length: n * n }, (_, k) => ((k * 37) % 11) - 5);
  const d = quboDiagonal(n, q, -2);
  for (let z = 0; z < 2 ** n; z++) {
    let v = -2;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) v += q[i * n + j]! * bit(z, i) * bit(z, j);
    assert.equal(d[z], v, `z=${z}`);
  }
});

test('maxCutDiagonal counts cut edge weight', () => {
  const n = 9;
  const edges = randomEdges(n, 15, 5, true);
  const d = maxCutDiagonal(n, edges);
  for (let z = 0; z < 2 ** n; z++) {
    let cut = 0;
    for (const e of edges) if (bit(z, e.i) !== bit(z, e.j)) cut += e.w;
    assert.ok(Math.abs(d[z]! - cut) < 1e-12, `z=${z}`);
  }
  assert.throws(() => maxCutDiagonal(3, [{ i: 1, j: 1 }]), RangeError);
  assert.throws(() => maxCutDiagonal(3, [{ i: 1, j: 3 }]), RangeError);
});

test('prepareDiagonal compresses integer and few-valued diagonals, keeps others raw', () => {
  const ints = maxCutDiagonal(10, randomEdges(10, 20, 2));
  const p = prepareDiagonal(ints);
  assert.ok(p.index);
  assert.equal(p.qubits, 10);
  for (let z = 0; z < ints.length; z++) assert.equal(diagonalValue(p, z), ints[z]);

  const fractional = Float64Array.from({ length: 64 }, (_, z) => [0.1, -2.5, 3.75][z % 3]!);
  const f = prepareDiagonal(fractional, { shared: true });
  assert.equal(f.values.length, 3);
  assert.ok(f.index!.buffer instanceof SharedArrayBuffer);
  for (let z = 0; z < 64; z++) assert.equal(diagonalValue(f, z), fractional[z]);

  assert.throws(() => prepareDiagonal(new Float64Array(6)), RangeError);
  assert.throws(() => prepareDiagonal(Float64Array.from([0, Number.NaN])), RangeError);
});
