import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Circuit,
  expectationDiagonal,
  isingDiagonal,
  maxCutDiagonal,
  maxCutTerms,
  prepareDiagonal,
  qaoaExpectation,
  qaoaExpectationReference,
  qaoaState,
  StateVector,
} from '../../../src/quantum/simulator/index.ts';
import { assertSameUpToPhase, assertStatesClose, hypercubeEdges, randomEdges } from './helpers.ts';

const GAMMA_CUBE = Math.atan(1 / Math.SQRT2);
const BETA_CUBE = Math.PI / 8;

test('MaxCut on the 3-cube, p=1, β=π/8, γ=arctan(1/√2): expected cut 8.30940', () => {
  // Convention: C(z) = cut value, cost layer e^{-iγC}, mixer e^{-iβΣX}, start |+>^n.
  const d = maxCutDiagonal(8, hypercubeEdges(3));
  const e = qaoaExpectation(8, d, [GAMMA_CUBE], [BETA_CUBE]);
  assert.ok(Math.abs(e - 8.3094010767585) < 1e-9, `got ${e}`);
  // the other sign of γ (or β) is the minimising direction, 12 - 8.3094
  const flipped = qaoaExpectation(8, d, [-GAMMA_CUBE], [BETA_CUBE]);
  assert.ok(Math.abs(flipped - 3.6905989232415) < 1e-9, `got ${flipped}`);
  assert.ok(Math.abs(qaoaExpectationReference(8, d, [GAMMA_CUBE], [BETA_CUBE]) - e) < 1e-12);
});

test('p = 0 gives the mean of the cost (|+>^n)', () => {
  const d = maxCutDiagonal(6, randomEdges(6, 9, 3));
  const mean = d.reduce((a, b) => a + b, 0) / d.length;
  assert.ok(Math.abs(qaoaExpectation(6, d, [], []) - mean) < 1e-12);
  assert.ok(Math.abs(qaoaExpectation(6, d, [], []) - 4.5) < 1e-12, 'half the 9 edges are cut on average');
});

test('fast kernel equals the gate-level reference across block/tile shapes and diagonal kinds', () => {
  const gammas = [0.31, -0.72, 1.13];
  const betas = [0.44, 1.27, -1.9]; // |tan β| below and above 1, both signs of sin β
  for (const n of [1, 2, 3, 5, 9, 12]) {
    const intDiag = maxCutDiagonal(n, n > 1 ? randomEdges(n, Math.min(n * 2, (n * (n - 1)) / 2), n) : []);
    const realDiag = Float64Array.from({ length: 2 ** n }, (_, z) => Math.sin(z * 1.7) * 3.3);
    for (const diag of [intDiag, realDiag]) {
      const ref = qaoaExpectationReference(n, diag, gammas, betas);
      for (const [lowBits, tile] of [[13, 8], [1, 1], [2, 2], [3, 4], [4, 8], [5, 1]] as const) {
        const fast = qaoaExpectation(n, diag, gammas, betas, { lowBits, tile, threads: 1 });
        assert.ok(Math.abs(fast - ref) < 1e-10, `n=${n} lowBits=${lowBits} tile=${tile}: ${fast} vs ${ref}`);
      }
      const refState = StateVector.uniform(n);
      const fastState = qaoaState(n, diag, gammas, betas, { lowBits: 3, tile: 2 });
      for (let l = 0; l < 3; l++) {
        const c = new Circuit(n).diagonal(diag, gammas[l]!).mixerX(betas[l]!);
        c.run(refState);
      }
      assertStatesClose(fastState, refState, 1e-12);
    }
  }
});

test('a raw diagonal with too many distinct values takes the uncompressed path and agrees', () => {
  const n = 17; // 131072 distinct values > 65536 table limit
  const diag = Float64Array.from({ length: 2 ** n }, (_, z) => z * 1e-5 + Math.cos(z));
  const prepared = prepareDiagonal(diag);
  assert.equal(prepared.index, null);
  assert.ok(prepared.raw);
  const a = qaoaExpectation(n, prepared, [0.2], [0.3]);
  const b = qaoaExpectationReference(n, diag, [0.2], [0.3]);
  assert.ok(Math.abs(a - b) < 1e-10);
});

test('gate-by-gate QAOA (H, RZZ, RX) equals the diagonal-layer QAOA', () => {
  const n = 7;
  const edges = randomEdges(n, 12, 11, true);
  const { quadratic, constant } = maxCutTerms(edges);
  const diag = maxCutDiagonal(n, edges);
  const gammas = [0.2, 0.5];
  const betas = [0.6, 0.3];
  const circuit = new Circuit(n);
  for (let q = 0; q < n; q++) circuit.h(q);
  for (let l = 0; l < gammas.length; l++) circuit.costLayer(quadratic, [], gammas[l]!, constant, 'maxcut').mixerX(betas[l]!);
  const gateByGate = StateVector.zero(n);
  circuit.runGateByGate(gateByGate);
  const layered = StateVector.zero(n);
  circuit.run(layered);
  // decomposition drops the constant's global phase only
  assertSameUpToPhase(gateByGate, layered, 1e-12);
  const fast = qaoaState(n, diag, gammas, betas);
  assertSameUpToPhase(gateByGate, fast, 1e-12);
  assert.ok(Math.abs(expectationDiagonal(gateByGate, diag) - qaoaExpectation(n, diag, gammas, betas)) < 1e-12);
});

test('Ising cost layer with linear terms: decomposition RZ(2γh), RZZ(2γw) matches the diagonal', () => {
  const n = 4;
  const quadratic = [{ i: 0, j: 1, w: 0.7 }, { i: 1, j: 3, w: -1.2 }, { i: 2, j: 3, w: 0.4 }];
  const linear = [{ i: 0, h: 0.3 }, { i: 2, h: -0.9 }];
  const c = new Circuit(n);
  for (let q = 0; q < n; q++) c.h(q);
  c.costLayer(quadratic, linear, 0.8, 2.5).mixerX(0.35);
  const a = StateVector.zero(n);
  c.run(a);
  const b = StateVector.zero(n);
  c.runGateByGate(b);
  assertSameUpToPhase(a, b, 1e-12);
  const diag = isingDiagonal(n, quadratic, linear, 2.5);
  assert.ok(Math.abs(expectationDiagonal(a, diag) - qaoaExpectation(n, diag, [0.8], [0.35])) < 1e-12);
});

test('angle validation', () => {
  const d = maxCutDiagonal(3, [{ i: 0, j: 1 }]);
  assert.throws(() => qaoaExpectation(3, d, [0.1], []), RangeError);
  assert.throws(() => qaoaExpectation(3, d, [Number.NaN], [0.1]), RangeError);
  assert.throws(() => qaoaExpectation(4, d, [0.1], [0.1]), RangeError);
});
