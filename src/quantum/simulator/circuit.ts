import {
  applyControlled1,
  applyDiagonalPhase,
  applyH,
  applyMCZ,
  applyMixerX,
  applyRX,
  applyRY,
  applyRZ,
  applyRZZ,
  applySwap,
  applyX,
  applyY,
  applyZ,
  MAT_X,
} from './gates.ts';
import { isingDiagonal } from './diagonals.ts';
import type { LinearTerm, QuadraticTerm } from './diagonals.ts';
import type { StateVector } from './state-vector.ts';

/** Names of the primitive gates, as in OpenQASM 3's stdgates.inc. */
export type GateName = 'h' | 'x' | 'y' | 'z' | 'rx' | 'ry' | 'rz' | 'cx' | 'cz' | 'swap' | 'rzz' | 'mcx' | 'mcz';

/** One primitive gate: for cx/mcx the last qubit is the target; for cz/mcz the order is free. */
export interface GateOp {
  readonly kind: 'gate';
  readonly name: GateName;
  readonly qubits: readonly number[];
  readonly params: readonly number[];
}

/**
 * A cost layer applied as one element-wise pass (amp[z] *= e^{-iγ·diag[z]}). When built from
 * Ising terms (costLayer), `decomposition` holds the exact RZ/RZZ gates (and global phase) it
 * equals, used for QASM export, depth and gate counts.
 */
export interface DiagonalOp {
  readonly kind: 'diagonal';
  readonly diag: Float64Array;
  readonly gamma: number;
  readonly label: string;
  readonly decomposition: readonly GateOp[] | null;
  /** Global phase e^{i·globalPhase} of the decomposition (from the constant term). */
  readonly globalPhase: number;
}

/** The transverse-field mixer e^{-iβΣX}: RX(2β) on every qubit. */
export interface MixerOp {
  readonly kind: 'mixerX';
  readonly beta: number;
}

export interface MeasureOp {
  readonly kind: 'measure';
}

export type CircuitOp = GateOp | DiagonalOp | MixerOp | MeasureOp;

/** A quantum circuit as data: build it, run it on a StateVector, count it, export it. */
export class Circuit {
  readonly qubits: number;
  readonly #ops: CircuitOp[] = [];

  constructor(qubits: number) {
    if (!Number.isInteger(qubits) || qubits < 1) throw new RangeError(`a circuit needs at least one qubit, got ${qubits}`);
    this.qubits = qubits;
  }

  get ops(): readonly CircuitOp[] {
    return this.#ops;
  }

  #q(q: number): number {
    if (!Number.isInteger(q) || q < 0 || q >= this.qubits) {
      throw new RangeError(`qubit ${q} out of range for a ${this.qubits}-qubit circuit`);
    }
    return q;
  }

  #gate(name: GateName, qubits: readonly number[], params: readonly number[] = []): this {
    const seen = new Set<number>();
    for (const q of qubits) {
      this.#q(q);
      if (seen.has(q)) throw new RangeError(`qubit ${q} used twice in ${name}`);
      seen.add(q);
    }
    for (const p of params) if (!Number.isFinite(p)) throw new RangeError(`${name} angle must be finite`);
    this.#ops.push({ kind: 'gate', name, qubits: [...qubits], params: [...params] });
    return this;
  }

  h(q: number): this {
    return this.#gate('h', [q]);
  }
  x(q: number): this {
    return this.#gate('x', [q]);
  }
  y(q: number): this {
    return this.#gate('y', [q]);
  }
  z(q: number): this {
    return this.#gate('z', [q]);
  }
  rx(q: number, theta: number): this {
    return this.#gate('rx', [q], [theta]);
  }
  ry(q: number, theta: number): this {
    return this.#gate('ry', [q], [theta]);
  }
  rz(q: number, theta: number): this {
    return this.#gate('rz', [q], [theta]);
  }
  cx(control: number, target: number): this {
    return this.#gate('cx', [control, target]);
  }
  cz(a: number, b: number): this {
    return this.#gate('cz', [a, b]);
  }
  swap(a: number, b: number): this {
    return this.#gate('swap', [a, b]);
  }
  /** RZZ(θ) = exp(-iθ Z_a Z_b / 2). */
  rzz(a: number, b: number, theta: number): this {
    return this.#gate('rzz', [a, b], [theta]);
  }
  /** X on target when every control is 1 (no controls: plain X; one: CNOT; two: Toffoli). */
  mcx(controls: readonly number[], target: number): this {
    if (controls.length === 0) return this.x(target);
    if (controls.length === 1) return this.cx(controls[0]!, target);
    return this.#gate('mcx', [...controls, target]);
  }
  /** Z phase flip on the states where every listed qubit is 1 (symmetric in them). */
  mcz(qubits: readonly number[]): this {
    if (qubits.length === 0) throw new RangeError('mcz needs at least one qubit');
    if (qubits.length === 1) return this.z(qubits[0]!);
    if (qubits.length === 2) return this.cz(qubits[0]!, qubits[1]!);
    return this.#gate('mcz', qubits);
  }

  /**
   * A precomputed diagonal phase layer e^{-iγ·diag} as one op. Without `gateForm` it has no gate
   * form (toQasm3 refuses it; use costLayer); with it, the caller vouches that those gates and
   * global phase equal the layer, and they are what is exported and counted.
   */
  diagonal(diag: Float64Array, gamma: number, label = 'diagonal', gateForm?: { gates: readonly GateOp[]; globalPhase: number }): this {
    if (diag.length !== 2 ** this.qubits) throw new RangeError(`diagonal length ${diag.length} != ${2 ** this.qubits}`);
    if (gateForm !== undefined) for (const g of gateForm.gates) for (const q of g.qubits) this.#q(q);
    this.#ops.push({ kind: 'diagonal', diag, gamma, label, decomposition: gateForm?.gates ?? null, globalPhase: gateForm?.globalPhase ?? 0 });
    return this;
  }

  /**
   * The cost layer e^{-iγ·C} for C = constant + Σ h_i s_i + Σ w_ij s_i s_j (s = 1 - 2·bit):
   * simulated as one diagonal pass, exported and counted as its exact decomposition
   * RZ(2γh_i) and RZZ(2γw_ij) (plus global phase -γ·constant).
   */
  costLayer(
    quadratic: readonly QuadraticTerm[],
    linear: readonly LinearTerm[],
    gamma: number,
    constant = 0,
    label = 'cost',
    diag?: Float64Array,
  ): this {
    const decomposition: GateOp[] = [];
    let globalPhase = -gamma * constant;
    for (const t of linear) {
      this.#q(t.i);
      decomposition.push({ kind: 'gate', name: 'rz', qubits: [t.i], params: [2 * gamma * t.h] });
    }
    for (const t of quadratic) {
      this.#q(t.i);
      this.#q(t.j);
      if (t.i === t.j) globalPhase -= gamma * t.w;
      else decomposition.push({ kind: 'gate', name: 'rzz', qubits: [t.i, t.j], params: [2 * gamma * t.w] });
    }
    const d = diag ?? isingDiagonal(this.qubits, quadratic, linear, constant);
    if (d.length !== 2 ** this.qubits) throw new RangeError(`diagonal length ${d.length} != ${2 ** this.qubits}`);
    this.#ops.push({ kind: 'diagonal', diag: d, gamma, label, decomposition, globalPhase });
    return this;
  }

  /** e^{-iβ Σ X_q}: RX(2β) on every qubit. */
  mixerX(beta: number): this {
    if (!Number.isFinite(beta)) throw new RangeError('mixer angle must be finite');
    this.#ops.push({ kind: 'mixerX', beta });
    return this;
  }

  measureAll(): this {
    this.#ops.push({ kind: 'measure' });
    return this;
  }

  /** The ops as primitive gates where a decomposition is known (mixers become RX gates). */
  #expanded(): (GateOp | DiagonalOp | MeasureOp)[] {
    const out: (GateOp | DiagonalOp | MeasureOp)[] = [];
    for (const op of this.#ops) {
      if (op.kind === 'mixerX') {
        for (let q = 0; q < this.qubits; q++) out.push({ kind: 'gate', name: 'rx', qubits: [q], params: [2 * op.beta] });
      } else if (op.kind === 'diagonal' && op.decomposition) {
        out.push(...op.decomposition);
      } else {
        out.push(op);
      }
    }
    return out;
  }

  /**
   * Circuit depth: the longest chain of ops per qubit, counting the circuit as exported
   * (cost layers as their RZ/RZZ gates, mixers as RX layers). A diagonal without a
   * decomposition and measureAll occupy every qubit for one layer.
   */
  depth(): number {
    const level = new Array<number>(this.qubits).fill(0);
    for (const op of this.#expanded()) {
      const qs = op.kind === 'gate' ? op.qubits : level.map((_, q) => q);
      let top = 0;
      for (const q of qs) top = Math.max(top, level[q]!);
      for (const q of qs) level[q] = top + 1;
    }
    return Math.max(0, ...level);
  }

  /** Gate counts by name, as exported (a diagonal without decomposition counts under its label). */
  gateCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const op of this.#expanded()) {
      const name = op.kind === 'gate' ? op.name : op.kind === 'diagonal' ? op.label : 'measure';
      counts[name] = (counts[name] ?? 0) + (op.kind === 'measure' ? this.qubits : 1);
    }
    return counts;
  }

  /**
   * OpenQASM 3 text. Multi-controlled gates use the `ctrl(k) @` modifier; cost layers are
   * written as their exact RZ/RZZ decomposition; a bare diagonal (no decomposition) has no
   * gate-level form, so export refuses it rather than writing something that is not the circuit.
   */
  toQasm3(): string {
    for (const op of this.#ops) {
      if (op.kind === 'diagonal' && !op.decomposition) {
        throw new Error(`diagonal layer "${op.label}" has no gate decomposition; build it with costLayer() to export it`);
      }
    }
    const lines = ['OPENQASM 3.0;', 'include "stdgates.inc";'];
    // stdgates.inc has no rzz: define it (as Qiskit's exporter does) when the circuit uses it
    if (this.#expanded().some((op) => op.kind === 'gate' && op.name === 'rzz')) {
      lines.push('gate rzz(theta) a, b { cx a, b; rz(theta) b; cx a, b; }');
    }
    lines.push(`qubit[${this.qubits}] q;`, `bit[${this.qubits}] c;`);
    const fmt = (x: number): string => {
      if (Object.is(x, -0) || x === 0) return '0';
      return Number.isInteger(x) ? `${x}.0` : `${x}`;
    };
    for (const op of this.#ops) {
      if (op.kind === 'measure') {
        lines.push('c = measure q;');
        continue;
      }
      if (op.kind === 'mixerX') {
        lines.push(`// mixer: exp(-i*${fmt(op.beta)}*sum X)`);
        for (let q = 0; q < this.qubits; q++) lines.push(`rx(${fmt(2 * op.beta)}) q[${q}];`);
        continue;
      }
      const gates = op.kind === 'gate' ? [op] : op.decomposition!;
      if (op.kind === 'diagonal') {
        lines.push(`// ${op.label}: exp(-i*${fmt(op.gamma)}*C)`);
        if (op.globalPhase !== 0) lines.push(`gphase(${fmt(op.globalPhase)});`);
      }
      for (const g of gates) lines.push(gateQasm(g, fmt));
    }
    return `${lines.join('\n')}\n`;
  }

  /** Applies every op to the state in order (measureAll is a no-op here; sample separately). */
  run(s: StateVector): void {
    if (s.qubits !== this.qubits) throw new RangeError(`circuit has ${this.qubits} qubits, state has ${s.qubits}`);
    for (const op of this.#ops) {
      switch (op.kind) {
        case 'measure':
          break;
        case 'mixerX':
          applyMixerX(s, op.beta);
          break;
        case 'diagonal':
          applyDiagonalPhase(s, op.diag, op.gamma);
          break;
        case 'gate':
          runGate(s, op);
          break;
      }
    }
  }

  /** Runs the ops gate by gate, using cost-layer decompositions instead of diagonal passes. */
  runGateByGate(s: StateVector): void {
    if (s.qubits !== this.qubits) throw new RangeError(`circuit has ${this.qubits} qubits, state has ${s.qubits}`);
    for (const op of this.#expanded()) {
      if (op.kind === 'gate') runGate(s, op);
      else if (op.kind === 'diagonal') applyDiagonalPhase(s, op.diag, op.gamma);
    }
  }
}

function gateQasm(g: GateOp, fmt: (x: number) => string): string {
  const args = g.qubits.map((q) => `q[${q}]`).join(', ');
  const params = g.params.length > 0 ? `(${g.params.map(fmt).join(', ')})` : '';
  if (g.name === 'mcx') return `ctrl(${g.qubits.length - 1}) @ x ${args};`;
  if (g.name === 'mcz') return `ctrl(${g.qubits.length - 1}) @ z ${args};`;
  return `${g.name}${params} ${args};`;
}

function runGate(s: StateVector, g: GateOp): void {
  const q = g.qubits;
  const p = g.params;
  switch (g.name) {
    case 'h':
      return applyH(s, q[0]!);
    case 'x':
      return applyX(s, q[0]!);
    case 'y':
      return applyY(s, q[0]!);
    case 'z':
      return applyZ(s, q[0]!);
    case 'rx':
      return applyRX(s, q[0]!, p[0]!);
    case 'ry':
      return applyRY(s, q[0]!, p[0]!);
    case 'rz':
      return applyRZ(s, q[0]!, p[0]!);
    case 'cx':
    case 'mcx':
      return applyControlled1(s, q.slice(0, -1), q[q.length - 1]!, MAT_X);
    case 'cz':
    case 'mcz':
      return applyMCZ(s, q);
    case 'swap':
      return applySwap(s, q[0]!, q[1]!);
    case 'rzz':
      return applyRZZ(s, q[0]!, q[1]!, p[0]!);
  }
}
