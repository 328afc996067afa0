import { ECR_QASM_DEFINITION, type IsaOp } from '../../src/quantum/hardware/isa-transpiler.ts';
import { MAT_SX } from '../../src/quantum/hardware/zsx-decomposition.ts';
import { applyCX, applyH, applyMatrix1, applyRZ, applyX } from '../../src/quantum/simulator/gates.ts';
import { sampleCounts } from '../../src/quantum/simulator/measure.ts';
import type { Rng } from '../../src/quantum/simulator/rng.ts';
import { StateVector } from '../../src/quantum/simulator/state-vector.ts';

/**
 * A reader and simulator for the OpenQASM 3 subset the transpiler writes (isa-transpiler.ts):
 * `rz(θ) $p`, `sx $p`, `x $p`, `ecr $a, $b`, `barrier`, `c[i] = measure $p`, one `bit[n] c`
 * and the `gate ecr` definition. Anything else is refused, so a test fails if the transpiler
 * ever writes a gate outside the ISA. Only the physical qubits the program touches are
 * simulated (renumbered densely), so a 127-qubit program with 8 active qubits is an 8-qubit state.
 */
export interface IsaProgram {
  ops: IsaOp[];
  /** Physical qubit measured into c[i]. */
  measured: number[];
}

export function parseIsaQasm(text: string): IsaProgram {
  const ops: IsaOp[] = [];
  const measured: number[] = [];
  let bits = -1;
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (lines[0] !== 'OPENQASM 3.0;') throw new Error(`not OpenQASM 3: ${lines[0]}`);
  for (const line of lines.slice(1)) {
    let m: RegExpExecArray | null;
    if (line === 'include "stdgates.inc";' || line === ECR_QASM_DEFINITION || line.startsWith('barrier ')) continue;
    if ((m = /^bit\[(\d+)\] c;$/.exec(line))) bits = Number(m[1]);
    else if ((m = /^rz\(([^)]+)\) \$(\d+);$/.exec(line))) {
      const angle = Number(m[1]);
      if (!Number.isFinite(angle)) throw new Error(`bad angle in ${line}`);
      ops.push({ name: 'rz', qubits: [Number(m[2])], angle });
    } else if ((m = /^(sx|x) \$(\d+);$/.exec(line))) ops.push({ name: m[1] as 'sx' | 'x', qubits: [Number(m[2])] });
    else if ((m = /^ecr \$(\d+), \$(\d+);$/.exec(line))) ops.push({ name: 'ecr', qubits: [Number(m[1]), Number(m[2])] });
    else if ((m = /^c\[(\d+)\] = measure \$(\d+);$/.exec(line))) measured[Number(m[1])] = Number(m[2]);
    else throw new Error(`outside the ISA subset: ${line}`);
  }
  if (bits < 0 || measured.length !== bits || measured.some((p) => p === undefined)) throw new Error('every classical bit must be measured once');
  return { ops, measured };
}

/** ECR exactly as ECR_QASM_DEFINITION says. */
function applyEcr(s: StateVector, a: number, b: number): void {
  for (const sign of [1, -1]) {
    applyH(s, b);
    applyCX(s, a, b);
    applyRZ(s, b, (sign * Math.PI) / 4);
    applyCX(s, a, b);
    applyH(s, b);
    if (sign === 1) applyX(s, a);
  }
}

/** Runs the ops from |0…0⟩ on the touched qubits; `index` maps a physical qubit to its place in the state. */
export function runIsa(ops: readonly IsaOp[], extra: readonly number[] = []): { state: StateVector; index: Map<number, number> } {
  const index = new Map<number, number>();
  for (const p of [...ops.flatMap((op) => op.qubits), ...extra]) if (!index.has(p)) index.set(p, index.size);
  const state = StateVector.zero(Math.max(1, index.size));
  for (const op of ops) {
    const q = op.qubits.map((p) => index.get(p)!);
    if (op.name === 'rz') applyRZ(state, q[0]!, op.angle);
    else if (op.name === 'sx') applyMatrix1(state, q[0]!, MAT_SX);
    else if (op.name === 'x') applyX(state, q[0]!);
    else applyEcr(state, q[0]!, q[1]!);
  }
  return { state, index };
}

/** Shots of the program: classical register value (bit i = c[i]) → count. */
export function sampleIsaQasm(text: string, shots: number, rng: Rng): Map<number, number> {
  const program = parseIsaQasm(text);
  const { state, index } = runIsa(program.ops, program.measured);
  const raw = sampleCounts(state, shots, rng);
  const counts = new Map<number, number>();
  for (const [z, c] of raw) {
    let value = 0;
    program.measured.forEach((p, i) => (value |= ((z >> index.get(p)!) & 1) << i));
    counts.set(value, (counts.get(value) ?? 0) + c);
  }
  return counts;
}
