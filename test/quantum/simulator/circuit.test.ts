import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Circuit, maxCutTerms, probabilities, StateVector } from '../../../src/quantum/simulator/index.ts';

test('QASM 3 export of a small circuit', () => {
  const c = new Circuit(3).h(0).cx(0, 1).mcx([0, 1], 2).rz(2, 0.5).mcz([0, 1, 2]).measureAll();
  assert.equal(
    c.toQasm3(),
    [
      'OPENQASM 3.0;',
      'include "stdgates.inc";',
      'qubit[3] q;',
      'bit[3] c;',
      'h q[0];',
      'cx q[0], q[1];',
      'ctrl(2) @ x q[0], q[1], q[2];',
      'rz(0.5) q[2];',
      'ctrl(2) @ z q[0], q[1], q[2];',
      'c = measure q;',
      '',
    ].join('\n'),
  );
});

test('QASM export of a QAOA circuit writes the cost layer as RZZ gates and defines rzz', () => {
  const { quadratic, constant } = maxCutTerms([{ i: 0, j: 1 }, { i: 1, j: 2 }]);
  const c = new Circuit(3);
  for (let q = 0; q < 3; q++) c.h(q);
  c.costLayer(quadratic, [{ i: 0, h: 0.25 }], 0.5, constant, 'maxcut').mixerX(0.25).measureAll();
  const qasm = c.toQasm3();
  assert.match(qasm, /^gate rzz\(theta\) a, b \{ cx a, b; rz\(theta\) b; cx a, b; \}$/m);
  assert.match(qasm, /^rzz\(-0\.5\) q\[0\], q\[1\];$/m);
  assert.match(qasm, /^rzz\(-0\.5\) q\[1\], q\[2\];$/m);
  assert.match(qasm, /^rz\(0\.25\) q\[0\];$/m);
  assert.match(qasm, /^gphase\(-0\.5\);$/m);
  assert.equal((qasm.match(/^rx\(0\.5\) q\[\d\];$/gm) ?? []).length, 3);
  assert.ok(qasm.indexOf('gate rzz') < qasm.indexOf('qubit[3] q;'));
  assert.throws(() => new Circuit(1).diagonal(new Float64Array(2), 1, 'opaque').toQasm3(), /no gate decomposition/);
});

test('depth and gate counts', () => {
  const c = new Circuit(4).h(0).h(1).h(2).h(3).cx(0, 1).cx(2, 3).cx(1, 2).mcx([0, 1, 2], 3);
  assert.equal(c.depth(), 4);
  assert.deepEqual(c.gateCounts(), { h: 4, cx: 3, mcx: 1 });
  const { quadratic, constant } = maxCutTerms([{ i: 0, j: 1 }, { i: 2, j: 3 }, { i: 1, j: 2 }]);
  const q = new Circuit(4);
  for (let k = 0; k < 4; k++) q.h(k);
  q.costLayer(quadratic, [], 0.3, constant).mixerX(0.2).measureAll();
  // h | rzz(0,1) rzz(2,3) | rzz(1,2) | rx | measure
  assert.equal(q.depth(), 5);
  assert.deepEqual(q.gateCounts(), { h: 4, rzz: 3, rx: 4, measure: 4 });
  const opaque = new Circuit(2).h(0).diagonal(new Float64Array(4), 1, 'layer').h(1);
  assert.equal(opaque.depth(), 3);
  assert.deepEqual(opaque.gateCounts(), { h: 2, layer: 1 });
});

test('circuit validation and run', () => {
  assert.throws(() => new Circuit(0), RangeError);
  assert.throws(() => new Circuit(2).cx(0, 0), RangeError);
  assert.throws(() => new Circuit(2).h(2), RangeError);
  assert.throws(() => new Circuit(2).rx(0, Number.POSITIVE_INFINITY), RangeError);
  assert.throws(() => new Circuit(2).run(StateVector.zero(3)), RangeError);
  const s = StateVector.zero(2);
  new Circuit(2).x(0).swap(0, 1).run(s);
  assert.equal(probabilities(s)[2], 1);
});
