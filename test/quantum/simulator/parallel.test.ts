import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  maxCutDiagonal,
  prepareDiagonal,
  qaoaExpectation,
  qaoaState,
  shutdownQaoaTeam,
} from '../../../src/quantum/simulator/index.ts';
import { assertStatesClose, randomEdges } from './helpers.ts';

after(() => shutdownQaoaTeam());

const gammas = [0.37, -0.81, 1.2];
const betas = [0.5, 1.31, -2.2];

test('parallel QAOA expectation is bit-for-bit the single-threaded one (2 and 3 threads, several layouts)', () => {
  for (const threads of [2, 3]) {
    for (const n of [6, 11, 14]) {
      const diag = maxCutDiagonal(n, randomEdges(n, 2 * n, 100 + n, true));
      const prepared = prepareDiagonal(diag, { shared: true });
      for (const [lowBits, tile] of [[14, 8], [4, 2], [7, 8]] as const) {
        const single = qaoaExpectation(n, prepared, gammas, betas, { threads: 1, lowBits, tile });
        const par = qaoaExpectation(n, prepared, gammas, betas, { threads, lowBits, tile });
        assert.equal(par, single, `n=${n} L=${lowBits} C=${tile} threads=${threads}`);
      }
    }
  }
});

test('parallel QAOA state equals single-threaded amplitude by amplitude; non-shared diagonals are copied', () => {
  const n = 13;
  const diag = Float64Array.from({ length: 2 ** n }, (_, z) => Math.cos(z * 0.37) * 2 + (z % 7));
  const single = qaoaState(n, diag, gammas, betas, { threads: 1, lowBits: 9 });
  const par = qaoaState(n, prepareDiagonal(diag), gammas, betas, { threads: 2, lowBits: 9 });
  assert.ok(par.shared, 'parallel state lives on shared memory');
  assertStatesClose(par, single, 1e-12);
  assert.ok(Math.abs(par.norm2() - 1) < 1e-12);
});

test('automatic threading from PARALLEL_MIN_QUBITS gives the same answer', () => {
  const n = 16;
  const prepared = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 24, 9)));
  const auto = qaoaExpectation(n, prepared, gammas, betas);
  const single = qaoaExpectation(n, prepared, gammas, betas, { threads: 1 });
  assert.equal(auto, single);
  assert.throws(() => qaoaExpectation(n, prepared, gammas, betas, { threads: 0 }), RangeError);
});
