import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EAGLE_QUBITS, eagleCouplingMap } from '../../../src/quantum/hardware/eagle-coupling-map.ts';
import { ECR_QASM_DEFINITION, EAGLE_R3_TARGET, transpileToIsa, TranspileError, type HardwareTarget } from '../../../src/quantum/hardware/isa-transpiler.ts';
import { decomposeZsx, MAT_SX } from '../../../src/quantum/hardware/zsx-decomposition.ts';
import { Circuit } from '../../../src/quantum/simulator/circuit.ts';
import { applyCX, applyH, applyMatrix1, applyRZ, applyX, matRX, matRY, matRZ, type Mat2 } from '../../../src/quantum/simulator/gates.ts';
import { seededRng, type Rng } from '../../../src/quantum/simulator/rng.ts';
import { StateVector } from '../../../src/quantum/simulator/state-vector.ts';
import { groverCircuit } from '../../../src/quantum/solvers/grover-search.ts';
import { parseIsaQasm, runIsa, sampleIsaQasm } from '../../helpers/isa-qasm-simulator.ts';

/** The original's amplitudes against the transpiled program's, read through the final layout, up to one global phase. */
function assertSameState(circuit: Circuit, target: HardwareTarget = EAGLE_R3_TARGET, options = {}): ReturnType<typeof transpileToIsa> {
  const expected = StateVector.zero(circuit.qubits);
  circuit.runGateByGate(expected);
  const isa = transpileToIsa(circuit, target, options);
  // The program as written (QASM text), not the op list: what a provider would run.
  const program = parseIsaQasm(isa.qasm);
  assert.deepEqual(program.measured, isa.finalLayout);
  const { state, index } = runIsa(program.ops, program.measured);
  let phase: [number, number] | undefined;
  let mass = 0;
  for (let z = 0; z < expected.re.length; z++) {
    let at = 0;
    isa.finalLayout.forEach((p, i) => (at |= ((z >> i) & 1) << index.get(p)!));
    const [er, ei] = [expected.re[z]!, expected.im[z]!];
    const [gr, gi] = [state.re[at]!, state.im[at]!];
    mass += gr * gr + gi * gi;
    assert.ok(Math.abs(Math.hypot(er, ei) - Math.hypot(gr, gi)) < 1e-9, `|amplitude| of ${z} differs`);
    if (Math.hypot(er, ei) < 1e-6) continue;
    const ratio: [number, number] = [(gr * er + gi * ei) / (er * er + ei * ei), (gi * er - gr * ei) / (er * er + ei * ei)];
    if (phase === undefined) phase = ratio;
    else assert.ok(Math.hypot(ratio[0] - phase[0], ratio[1] - phase[1]) < 1e-8, `relative phase of ${z} differs`);
  }
  // Every other qubit the program touched (routing's helpers) is back in |0⟩.
  assert.ok(Math.abs(mass - 1) < 1e-9, `probability ${mass} left the logical subspace`);
  return isa;
}

function randomCircuit(rng: Rng, qubits: number, gates: number): Circuit {
  const c = new Circuit(qubits);
  const pick = (k: number): number[] => {
    const all = [...Array(qubits).keys()];
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all.slice(0, k);
  };
  const angle = (): number => (rng.next() - 0.5) * 4 * Math.PI;
  for (let g = 0; g < gates; g++) {
    const kind = Math.floor(rng.next() * 13);
    const [a, b] = pick(2) as [number, number];
    if (kind === 0) c.h(a);
    else if (kind === 1) c.x(a).y(b);
    else if (kind === 2) c.z(a).rx(b, angle());
    else if (kind === 3) c.ry(a, angle());
    else if (kind === 4) c.rz(a, angle());
    else if (kind === 5) c.cx(a, b);
    else if (kind === 6) c.cz(a, b);
    else if (kind === 7) c.swap(a, b);
    else if (kind === 8) c.rzz(a, b, angle());
    else if (kind === 9 && qubits >= 3) {
      const [x, y, t] = pick(3) as [number, number, number];
      c.mcx([x, y], t);
    }
    else if (kind === 10 && qubits >= 3) c.mcz(pick(3));
    else if (kind === 11) c.costLayer([{ i: a, j: b, w: rng.next() - 0.5 }], [{ i: a, h: rng.next() }], angle(), 0.7);
    else c.mixerX(angle());
  }
  return c.measureAll();
}

test('the Eagle r3 map: 127 qubits, 144 couplers, degree at most 3, one connected graph', () => {
  const edges = eagleCouplingMap();
  assert.equal(edges.length, 144);
  assert.equal(new Set(edges.map(([a, b]) => `${a}-${b}`)).size, 144);
  const degree = new Map<number, number>();
  for (const [a, b] of edges) for (const q of [a, b]) degree.set(q, (degree.get(q) ?? 0) + 1);
  assert.equal(degree.size, EAGLE_QUBITS);
  assert.ok(Math.max(...degree.values()) <= 3);
  // A sample of the published pairs (bridges of the first and last rows).
  for (const pair of [[0, 14], [14, 18], [12, 17], [17, 30], [20, 33], [33, 39], [96, 109], [109, 114], [112, 126], [125, 126]]) {
    assert.ok(edges.some(([a, b]) => a === pair[0] && b === pair[1]), `coupler ${pair.join('-')}`);
  }
  const seen = new Set([0]);
  const queue = [0];
  while (queue.length > 0) {
    const v = queue.pop()!;
    for (const [a, b] of edges) {
      for (const [x, y] of [[a, b], [b, a]] as const) {
        if (x !== v || seen.has(y)) continue;
        seen.add(y);
        queue.push(y);
      }
    }
  }
  assert.equal(seen.size, EAGLE_QUBITS);
});

test('any single-qubit unitary becomes rz/sx/x gates equal up to global phase', () => {
  const rng = seededRng(3);
  const mats: Mat2[] = [matRZ(0.3), matRX(Math.PI), matRY(Math.PI / 2), matRX(1e-12), [0, 0, 1, 0, 1, 0, 0, 0]];
  for (let k = 0; k < 10; k++) mats.push(matRZ(rng.next() * 7));
  for (let k = 0; k < 60; k++) {
    const a = matRZ((rng.next() - 0.5) * 9);
    const b = matRY((rng.next() - 0.5) * 9);
    const c = matRZ((rng.next() - 0.5) * 9);
    mats.push(mulAll([a, b, c]));
  }
  for (const m of mats) {
    for (const input of [0, 1]) {
      const want = StateVector.zero(1);
      want.re[0] = input === 0 ? 1 : 0;
      want.re[1] = input;
      applyMatrix1(want, 0, m);
      const got = StateVector.zero(1);
      got.re[0] = input === 0 ? 1 : 0;
      got.re[1] = input;
      for (const g of decomposeZsx(m)) {
        if (g.name === 'rz') applyRZ(got, 0, g.angle);
        else if (g.name === 'sx') applyMatrix1(got, 0, MAT_SX);
        else applyX(got, 0);
      }
      for (let z = 0; z < 2; z++) assert.ok(Math.abs(Math.hypot(want.re[z]!, want.im[z]!) - Math.hypot(got.re[z]!, got.im[z]!)) < 1e-9);
    }
    // Phases: compare the full unitaries column by column with one common factor.
    assertSameUnitary(m, decomposeZsx(m));
  }
});

function mulAll(ms: Mat2[]): Mat2 {
  const s = [1, 0, 0, 0, 0, 0, 1, 0];
  let acc = s as unknown as Mat2;
  for (const m of ms) {
    const out = new Array<number>(8).fill(0);
    for (let r = 0; r < 2; r++) for (let c = 0; c < 2; c++) for (let k = 0; k < 2; k++) {
      const [ar, ai] = [m[(r * 2 + k) * 2]!, m[(r * 2 + k) * 2 + 1]!];
      const [br, bi] = [acc[(k * 2 + c) * 2]!, acc[(k * 2 + c) * 2 + 1]!];
      out[(r * 2 + c) * 2] = out[(r * 2 + c) * 2]! + ar * br - ai * bi;
      out[(r * 2 + c) * 2 + 1] = out[(r * 2 + c) * 2 + 1]! + ar * bi + ai * br;
    }
    acc = out as unknown as Mat2;
  }
  return acc;
}

function assertSameUnitary(m: Mat2, gates: ReturnType<typeof decomposeZsx>): void {
  const ms = gates.map((g): Mat2 => (g.name === 'rz' ? matRZ(g.angle) : g.name === 'sx' ? MAT_SX : [0, 0, 1, 0, 1, 0, 0, 0]));
  const u = mulAll(ms);
  let phase: [number, number] | undefined;
  for (let i = 0; i < 4; i++) {
    const [mr, mi] = [m[2 * i]!, m[2 * i + 1]!];
    const [ur, ui] = [u[2 * i]!, u[2 * i + 1]!];
    if (Math.hypot(mr, mi) < 1e-9) {
      assert.ok(Math.hypot(ur, ui) < 1e-9);
      continue;
    }
    const d = mr * mr + mi * mi;
    const ratio: [number, number] = [(ur * mr + ui * mi) / d, (ui * mr - ur * mi) / d];
    if (phase === undefined) phase = ratio;
    else assert.ok(Math.hypot(ratio[0] - phase[0], ratio[1] - phase[1]) < 1e-9, 'relative phase');
  }
}

test('random small circuits: the transpiled QASM, run on the simulator, gives the same state up to global phase', () => {
  const rng = seededRng(20261126);
  for (let trial = 0; trial < 40; trial++) {
    const qubits = 2 + (trial % 5);
    const isa = assertSameState(randomCircuit(rng, qubits, 6 + (trial % 7) * 3));
    for (const op of isa.ops) assert.ok(['rz', 'sx', 'x', 'ecr'].includes(op.name));
  }
});

test('a layout spread over the chip needs swaps, and the routed circuit is still the same', () => {
  const rng = seededRng(7);
  let swaps = 0;
  for (let trial = 0; trial < 6; trial++) {
    const isa = assertSameState(randomCircuit(rng, 4, 12), EAGLE_R3_TARGET, { initialLayout: [0, 4, 18, 24] });
    swaps += isa.swaps;
    // Every ECR is on a coupler of the map.
    const edges = new Set(eagleCouplingMap().flatMap(([a, b]) => [`${a}-${b}`, `${b}-${a}`]));
    for (const op of isa.ops) if (op.name === 'ecr') assert.ok(edges.has(`${op.qubits[0]}-${op.qubits[1]}`));
  }
  assert.ok(swaps > 0);
});

test('a directed map: every ECR runs in the coupler\'s own direction, and the circuit is unchanged', () => {
  const directed: HardwareTarget = { name: 'eagle_r3_directed', qubits: EAGLE_QUBITS, edges: eagleCouplingMap().map(([a, b]) => ((a + b) % 2 === 0 ? [a, b] : [b, a])), directed: true };
  const allowed = new Set(directed.edges.map(([a, b]) => `${a}-${b}`));
  const rng = seededRng(11);
  for (let trial = 0; trial < 8; trial++) {
    const isa = assertSameState(randomCircuit(rng, 3 + (trial % 3), 10), directed);
    for (const op of isa.ops) if (op.name === 'ecr') assert.ok(allowed.has(`${op.qubits[0]}-${op.qubits[1]}`), `ecr ${op.qubits.join(',')}`);
  }
});

test('a Grover circuit transpiles and its samples find the marked index', () => {
  const circuit = groverCircuit(3, [5], 2);
  const isa = assertSameState(circuit);
  const counts = sampleIsaQasm(isa.qasm, 400, seededRng(1));
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
  assert.equal(best[0], 5);
});

test('circuits the hardware path cannot take are refused with a reason', () => {
  assert.throws(() => transpileToIsa(new Circuit(128).measureAll()), TranspileError);
  const big = new Circuit(14);
  big.diagonal(new Float64Array(2 ** 14), 1, 'oracle');
  assert.throws(() => transpileToIsa(big.measureAll()), /no gate form/);
  const long = new Circuit(2);
  for (let k = 0; k < 30; k++) long.cx(0, 1);
  assert.throws(() => transpileToIsa(long.measureAll(), EAGLE_R3_TARGET, { maxTwoQubitGates: 10 }), /more than 10 two-qubit gates/);
});

test('the ECR cap is counted while lowering: a circuit is refused before its whole op list is built', () => {
  // 11 CX and then a gate after the measurement: lowering reaches the 11th CX first. Counting only
  // after the whole list was lowered (the old way) would answer the later, different error instead.
  const c = new Circuit(2);
  for (let k = 0; k < 11; k++) c.cx(0, 1);
  c.measureAll();
  c.h(0);
  assert.throws(() => transpileToIsa(c, EAGLE_R3_TARGET, { maxTwoQubitGates: 10 }), /more than 10 two-qubit gates/);
  // A 12-qubit Grover would lower to millions of ops; with the default cap it is refused at once.
  const grover = groverCircuit(12, [7], 50);
  assert.throws(() => transpileToIsa(grover), /more than 20000 two-qubit gates/);
});

test('the written `gate ecr` is Qiskit\'s ECR: its matrix, hard-coded from Qiskit\'s ECRGate (qubit 0 least significant)', () => {
  // Qiskit: ECR q_0, q_1 = 1/√2 [[0, 1, 0, i], [1, 0, -i, 0], [0, i, 0, 1], [-i, 0, 1, 0]]; rows and
  // columns indexed q_1·2 + q_0. Written out here, not taken from src, so a wrong definition fails.
  const s = Math.SQRT1_2;
  const qiskit: [number, number][][] = [
    [[0, 0], [s, 0], [0, 0], [0, s]],
    [[s, 0], [0, 0], [0, -s], [0, 0]],
    [[0, 0], [0, s], [0, 0], [s, 0]],
    [[0, -s], [0, 0], [s, 0], [0, 0]],
  ];
  // Column k: ECR on $0, $1 applied to |k⟩, prepared with x gates (rz(0) first fixes $0 → index 0, $1 → index 1).
  for (let k = 0; k < 4; k++) {
    const prep: { name: 'x'; qubits: [number] }[] = [];
    if (k & 1) prep.push({ name: 'x', qubits: [0] });
    if (k & 2) prep.push({ name: 'x', qubits: [1] });
    const { state, index } = runIsa([{ name: 'rz', qubits: [0], angle: 0 }, { name: 'rz', qubits: [1], angle: 0 }, ...prep, { name: 'ecr', qubits: [0, 1] }]);
    assert.deepEqual([index.get(0), index.get(1)], [0, 1]);
    for (let row = 0; row < 4; row++) {
      // rz(0) is the identity exactly (no global phase), so no phase freedom is needed.
      assert.ok(Math.abs(state.re[row]! - qiskit[row]![k]![0]) < 1e-12 && Math.abs(state.im[row]! - qiskit[row]![k]![1]) < 1e-12, `ECR[${row}][${k}] = ${state.re[row]} + ${state.im[row]}i`);
    }
    // The definition text the QASM carries, interpreted statement by statement, is the same matrix.
    const v = StateVector.zero(2);
    if (k & 1) applyX(v, 0);
    if (k & 2) applyX(v, 1);
    const body = /^gate ecr _a, _b \{(.*)\}$/.exec(ECR_QASM_DEFINITION)![1]!.split(';').map((t) => t.trim()).filter((t) => t !== '');
    const qubit = (name: string): number => ({ _a: 0, _b: 1 })[name as '_a' | '_b'];
    for (const statement of body) {
      let m: RegExpExecArray | null;
      if ((m = /^h (_[ab])$/.exec(statement))) applyH(v, qubit(m[1]!));
      else if ((m = /^x (_[ab])$/.exec(statement))) applyX(v, qubit(m[1]!));
      else if ((m = /^cx (_[ab]), (_[ab])$/.exec(statement))) applyCX(v, qubit(m[1]!), qubit(m[2]!));
      else if ((m = /^rz\((-?)pi\/4\) (_[ab])$/.exec(statement))) applyRZ(v, qubit(m[2]!), (m[1] === '-' ? -1 : 1) * Math.PI / 4);
      else assert.fail(`unexpected statement in the ecr definition: ${statement}`);
    }
    for (let row = 0; row < 4; row++) assert.ok(Math.abs(v.re[row]! - qiskit[row]![k]![0]) < 1e-12 && Math.abs(v.im[row]! - qiskit[row]![k]![1]) < 1e-12);
  }
});
