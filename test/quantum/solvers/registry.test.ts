import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quboDiagonal, isingDiagonal } from '../../../src/quantum/simulator/diagonals.ts';
import { nelderMead } from '../../../src/quantum/solvers/nelder-mead.ts';
import { quboToIsing } from '../../../src/quantum/solvers/qaoa-runner.ts';
import { solveProblem, validateProblem } from '../../../src/quantum/solvers/registry.ts';
import { patternProblem, portfolioProblem, routeProblem } from '../fixtures.ts';

describe('solver registry', () => {
  it('the same seed gives the same answer and the same shot counts', () => {
    for (const [solver, problem] of [
      ['qaoa', routeProblem(3)],
      ['qubo', portfolioProblem()],
      ['grover', patternProblem(16, 3)],
    ] as const) {
      const a = solveProblem(solver, problem, { shots: 256, seed: 42 });
      const b = solveProblem(solver, problem, { shots: 256, seed: 42 });
      assert.deepEqual(a.solution, b.solution, solver);
      assert.equal(a.meta.optimal_count, b.meta.optimal_count, solver);
      assert.equal(a.meta.energy, b.meta.energy, solver);
    }
  });

  it('names the field of a schema mismatch (422) and refuses a foreign problem type', () => {
    assert.throws(() => validateProblem('qubo', { ...portfolioProblem(), constraints: { max_assets: 'three', max_risk: 0.1, min_return: 0 } }), (e: { status?: number; param?: string }) => e.status === 422 && e.param === 'problem.constraints.max_assets');
    assert.throws(() => validateProblem('qsvm', routeProblem(2), 'problems.4'), (e: { status?: number; param?: string; message?: string }) => e.status === 422 && e.param === 'problems.4.type' && /classification/.test(e.message ?? ''));
    assert.throws(() => validateProblem('grover', 'find it'), (e: { status?: number }) => e.status === 400);
    assert.throws(
      () => validateProblem('qsvm', { type: 'classification', training_data: [{ features: [1, 2], label: 'a' }, { features: [1], label: 'b' }], predict: [{ features: [1, 2] }] }),
      (e: { status?: number; param?: string }) => e.status === 422 && e.param === 'problem.training_data.1.features',
    );
    assert.throws(() => solveProblem('annealer', routeProblem(2), { shots: 1 }), (e: { status?: number; param?: string }) => e.status === 400 && e.param === 'solver');
  });

  it('exports the circuit that ran as OpenQASM 3 when asked', () => {
    const route = solveProblem('qaoa', { ...routeProblem(3), options: { include_qasm: true } }, { shots: 64, seed: 1 });
    const circuit = route.solution['circuit'] as { qasm: string; qubits: number; gates: Record<string, number> };
    assert.match(circuit.qasm, /^OPENQASM 3\.0;/);
    assert.equal(circuit.qasm.match(/^rzz\(/gm)?.length, circuit.gates['rzz']);
    assert.match(circuit.qasm, /qubit\[9\] q;/);
    // the portfolio cost is a precomputed diagonal, exported through its exact Walsh gate form
    const qubo = solveProblem('qubo', { ...portfolioProblem(), options: { include_qasm: true } }, { shots: 64, seed: 1 });
    const quboCircuit = qubo.solution['circuit'] as { qasm: string; gates: Record<string, number> };
    assert.match(quboCircuit.qasm, /qubit\[6\] q;/);
    assert.equal(quboCircuit.qasm.match(/^rz\(/gm)?.length, quboCircuit.gates['rz']);
    assert.ok((quboCircuit.gates['cx'] ?? 0) > 0);
    const grover = solveProblem('grover', { ...patternProblem(8, 5), options: { include_qasm: true } }, { shots: 64, seed: 1 });
    assert.match((grover.solution['circuit'] as { qasm: string }).qasm, /ctrl\(2\) @ z/);
    const plain = solveProblem('qubo', portfolioProblem(), { shots: 64, seed: 1 });
    assert.equal((plain.solution['circuit'] as { qasm?: string }).qasm, undefined);
  });

  it('maps a simulator capacity refusal to 422 problem_too_large', () => {
    const wide = Array.from({ length: 40 }, (_, i) => i);
    assert.throws(
      () => solveProblem('qsvm', { type: 'classification', training_data: [{ features: wide, label: 'a' }, { features: wide, label: 'b' }], predict: [{ features: wide }] }, { shots: 8 }),
      (e: { status?: number; code?: string }) => e.status === 422 && e.code === 'problem_too_large',
    );
  });

  it('QUBO → Ising keeps every bitstring’s value', () => {
    const n = 4;
    const q = Float64Array.from({ length: n * n }, (_, i) => Math.sin(i * 1.7) * 3);
    const ising = quboToIsing(n, q, 1.25);
    const a = quboDiagonal(n, q, 1.25);
    const b = isingDiagonal(n, ising.quadratic, ising.linear, ising.constant);
    for (let z = 0; z < 2 ** n; z++) assert.ok(Math.abs(a[z]! - b[z]!) < 1e-12, `z=${z}`);
  });

  it('Nelder–Mead finds the minimum of a smooth bowl and the Rosenbrock valley', () => {
    const bowl = nelderMead((x) => (x[0]! - 1) ** 2 + 2 * (x[1]! + 0.5) ** 2, [0, 0], { maxEvaluations: 400 });
    assert.ok(Math.abs(bowl.x[0]! - 1) < 1e-3 && Math.abs(bowl.x[1]! + 0.5) < 1e-3);
    const rosen = nelderMead((x) => 100 * (x[1]! - x[0]! ** 2) ** 2 + (1 - x[0]!) ** 2, [-1, 1], { maxEvaluations: 2000, tolerance: 1e-14 });
    assert.ok(rosen.value < 1e-6, `value ${rosen.value}`);
  });
});

describe('QAOA runner: quantum evidence', () => {
  it('zero angles leave the uniform state: amplification 1', async () => {
    const { runQaoa, quantumEvidence } = await import('../../../src/quantum/solvers/qaoa-runner.ts');
    const { seededRng } = await import('../../../src/quantum/simulator/rng.ts');
    // distance (in flipped bits) from 37: a landscape the X mixer can descend
    const popcount = (x: number): number => (x === 0 ? 0 : (x & 1) + popcount(x >> 1));
    const diagonal = Float64Array.from({ length: 64 }, (_, z) => popcount(z ^ 37));
    const flat = runQaoa(6, { diagonal }, { shots: 16, rng: seededRng(1), fixedAngles: { gammas: [0, 0], betas: [0, 0] } });
    const q0 = quantumEvidence(flat.state, [37]);
    assert.ok(Math.abs(q0.amplification - 1) < 1e-9, JSON.stringify(q0));
    const tuned = runQaoa(6, { diagonal }, { shots: 16, rng: seededRng(1) });
    assert.ok(quantumEvidence(tuned.state, [37]).amplification > 2);
  });
});

describe('QAOA runner: gate form of a precomputed diagonal', () => {
  it('the Walsh expansion (CX ladders + RZ, global phase) equals the diagonal layer exactly', async () => {
    const { walshGateForm } = await import('../../../src/quantum/solvers/qaoa-runner.ts');
    const { Circuit } = await import('../../../src/quantum/simulator/circuit.ts');
    const { StateVector } = await import('../../../src/quantum/simulator/state-vector.ts');
    const n = 4;
    const diag = Float64Array.from({ length: 16 }, (_, z) => Math.sin(z * 1.3) * 2 + (z === 11 ? 3 : 0));
    const gamma = 0.7;
    const viaDiagonal = StateVector.uniform(n);
    new Circuit(n).diagonal(diag, gamma).run(viaDiagonal);
    const form = walshGateForm(n, diag, gamma);
    const gates = new Circuit(n);
    for (const g of form.gates) {
      if (g.name === 'cx') gates.cx(g.qubits[0]!, g.qubits[1]!);
      else gates.rz(g.qubits[0]!, g.params[0]!);
    }
    const viaGates = StateVector.uniform(n);
    gates.run(viaGates);
    const phase = { re: Math.cos(form.globalPhase), im: Math.sin(form.globalPhase) };
    for (let z = 0; z < 16; z++) {
      const re = viaGates.re[z]! * phase.re - viaGates.im[z]! * phase.im;
      const im = viaGates.re[z]! * phase.im + viaGates.im[z]! * phase.re;
      assert.ok(Math.abs(re - viaDiagonal.re[z]!) < 1e-12 && Math.abs(im - viaDiagonal.im[z]!) < 1e-12, `amplitude ${z}`);
    }
  });
});
