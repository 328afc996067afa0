import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyH, applyMCZ, applyX, Circuit, probabilityOf, StateVector } from '../../../src/quantum/simulator/index.ts';

/** Oracle: phase-flip |marked> using X on its zero bits around a multi-controlled Z. */
function oracle(c: Circuit, n: number, marked: number): void {
  for (let q = 0; q < n; q++) if (((marked >> q) & 1) === 0) c.x(q);
  c.mcz([...Array(n).keys()]);
  for (let q = 0; q < n; q++) if (((marked >> q) & 1) === 0) c.x(q);
}

function diffusion(c: Circuit, n: number): void {
  for (let q = 0; q < n; q++) c.h(q).x(q);
  c.mcz([...Array(n).keys()]);
  for (let q = 0; q < n; q++) c.x(q).h(q);
}

test('Grover success probability follows sin²((2k+1)θ), sin θ = 1/√N', () => {
  for (const n of [3, 5, 7]) {
    const N = 2 ** n;
    const marked = (N * 5) >> 3;
    const theta = Math.asin(1 / Math.sqrt(N));
    const c = new Circuit(n);
    for (let q = 0; q < n; q++) c.h(q);
    const s = StateVector.zero(n);
    c.run(s);
    const maxK = Math.floor((Math.PI / 4) * Math.sqrt(N)) + 2;
    for (let k = 1; k <= maxK; k++) {
      const step = new Circuit(n);
      oracle(step, n, marked);
      diffusion(step, n);
      step.run(s);
      const expected = Math.sin((2 * k + 1) * theta) ** 2;
      assert.ok(Math.abs(probabilityOf(s, marked) - expected) < 1e-10, `n=${n} k=${k}: ${probabilityOf(s, marked)} vs ${expected}`);
    }
  }
});

test('direct gate functions give the same Grover step as the circuit', () => {
  const n = 4;
  const s = StateVector.zero(n);
  for (let q = 0; q < n; q++) applyH(s, q);
  applyMCZ(s, [0, 1, 2, 3]); // marks |1111>
  for (let q = 0; q < n; q++) {
    applyH(s, q);
    applyX(s, q);
  }
  applyMCZ(s, [0, 1, 2, 3]);
  for (let q = 0; q < n; q++) {
    applyX(s, q);
    applyH(s, q);
  }
  const theta = Math.asin(1 / 4);
  assert.ok(Math.abs(probabilityOf(s, 15) - Math.sin(3 * theta) ** 2) < 1e-12);
});
