import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertFits,
  HARD_MAX_QUBITS,
  maxCutDiagonal,
  maxQubits,
  memoryBudget,
  qaoaExpectation,
  SimulatorCapacityError,
  StateVector,
} from '../../../src/quantum/simulator/index.ts';

test('40 qubits is refused before allocating, with the numbers in the error', () => {
  const before = process.memoryUsage().arrayBuffers;
  assert.throws(
    () => StateVector.zero(40),
    (err: unknown) =>
      err instanceof SimulatorCapacityError &&
      err.qubits === 40 &&
      err.bytesNeeded === 2 ** 40 * 16 &&
      err.bytesAllowed === memoryBudget() &&
      err.code === 'simulator_capacity_exceeded' &&
      /40 qubits/.test(err.message),
  );
  assert.ok(process.memoryUsage().arrayBuffers - before < 1024 * 1024);
});

test('a tiny budget refuses what it cannot hold and allows what it can', () => {
  const budget = 16 * 2 ** 10; // exactly one 10-qubit state
  assert.doesNotThrow(() => assertFits(10, 1, budget));
  assert.throws(() => assertFits(11, 1, budget), SimulatorCapacityError);
  assert.throws(() => assertFits(10, 2, budget), SimulatorCapacityError);
  assert.equal(maxQubits(1, budget), 10);
  assert.throws(() => StateVector.uniform(12, { budgetBytes: budget }), (e: unknown) => e instanceof SimulatorCapacityError && e.bytesAllowed === budget);
  assert.doesNotThrow(() => StateVector.uniform(9, { budgetBytes: budget }));
});

test('SVC_SIM_MAX_BYTES overrides the budget; the hard qubit cap holds regardless', () => {
  assert.equal(memoryBudget({ SVC_SIM_MAX_BYTES: '4096' }), 4096);
  assert.equal(memoryBudget({ SVC_SIM_MAX_BYTES: 'nonsense' }), memoryBudget({}));
  assert.throws(() => assertFits(HARD_MAX_QUBITS + 1, 1, Number.MAX_SAFE_INTEGER), SimulatorCapacityError);
  assert.ok(maxQubits() <= HARD_MAX_QUBITS);
  assert.ok(maxQubits() >= 20, 'this class of machine holds at least 20 qubits');
  assert.throws(() => assertFits(-1), RangeError);
});

test('QAOA evaluation and diagonal builders check the guard too', () => {
  const diag = new Float64Array(2 ** 12);
  assert.throws(() => qaoaExpectation(12, diag, [0.1], [0.1], { budgetBytes: 1024 }), SimulatorCapacityError);
  assert.throws(() => maxCutDiagonal(36, [{ i: 0, j: 1 }]), SimulatorCapacityError);
});
