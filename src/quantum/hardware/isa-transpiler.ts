import type { Circuit, GateOp } from '../simulator/circuit.ts';
import { MAT_H, MAT_I, MAT_X, MAT_Y, MAT_Z, matRX, matRY, matRZ, type Mat2 } from '../simulator/gates.ts';
import { walshGateForm } from '../solvers/qaoa-runner.ts';
import { EAGLE_QUBITS, eagleCouplingMap } from './eagle-coupling-map.ts';
import { decomposeZsx, MAT_SDG, MAT_SXDG, mulMat2 } from './zsx-decomposition.ts';

/**
 * The transpiler from the solvers' circuits (simulator/circuit.ts) to an ISA circuit for an IBM
 * Eagle-class backend: basis gates `ecr`, `rz`, `sx`, `x` (plus `measure`, `barrier`) on the
 * physical qubits of a coupling map, written as OpenQASM 3 with hardware qubits (`$n`).
 *
 * Three passes, each exact (no approximation anywhere, so the transpiled circuit equals the
 * original up to a global phase and the final qubit permutation it reports):
 * 1. Lowering to CX + single-qubit unitaries: cz = H·CX·H, swap = 3 CX, rzz = CX·RZ·CX, multi-
 *    controlled Z (and X = H·MCZ·H) and diagonals without a gate form as their phase polynomial
 *    (walshGateForm: CX parity ladders and RZ), mixers as RX, cost layers as their RZ/RZZ gates.
 * 2. Layout and routing: logical qubit i starts on the i-th qubit of a breadth-first walk of the
 *    coupling map from `root` (a connected region). Before each CX whose qubits are not coupled,
 *    the control is swapped one coupler at a time along a shortest path (BFS) until it is next
 *    to the target; the layout is updated, so the final position of every logical qubit is known
 *    and measured into its own classical bit (c[i] holds logical qubit i). Simple and correct,
 *    not optimal (no lookahead, no SABRE).
 * 3. Basis translation: CX(c,t) = [Sdg c, SXdg t] · ECR(c,t) · [X c] (checked numerically in the
 *    tests); against a directed map, an ECR the coupler does not run is turned around with H on
 *    both qubits. Runs of single-qubit gates on a qubit are multiplied into one 2×2 unitary and
 *    written as rz/sx/x (zsx-decomposition.ts).
 */

export interface HardwareTarget {
  /** Processor family, for the response (e.g. `eagle_r3`). */
  name: string;
  qubits: number;
  /** Couplers. With `directed`, [a, b] means ECR runs with a as its first qubit only. */
  edges: readonly (readonly [number, number])[];
  directed: boolean;
}

export const EAGLE_R3_TARGET: HardwareTarget = { name: 'eagle_r3', qubits: EAGLE_QUBITS, edges: eagleCouplingMap(), directed: false };

export type IsaOp = { name: 'rz'; qubits: [number]; angle: number } | { name: 'sx' | 'x'; qubits: [number] } | { name: 'ecr'; qubits: [number, number] };

export interface IsaCircuit {
  target: string;
  /** Logical qubits of the source circuit (classical bits c[0..n-1]). */
  logicalQubits: number;
  ops: IsaOp[];
  /** Physical qubit each logical qubit starts on. */
  initialLayout: number[];
  /** Physical qubit each logical qubit is measured on (after routing's swaps). */
  finalLayout: number[];
  swaps: number;
  depth: number;
  gates: Record<string, number>;
  qasm: string;
}

/** A circuit the hardware path cannot take (too large, or a layer with no gate form); the service answers 422. */
export class TranspileError extends Error {
  override name = 'TranspileError';
}

export interface TranspileOptions {
  /** Where the breadth-first layout starts; default 0. */
  root?: number;
  /** A layout to use instead (physical qubit per logical qubit, distinct). */
  initialLayout?: readonly number[];
  /** Refuse circuits that need more ECR gates than this; default 20 000 (far beyond what today's hardware runs faithfully). */
  maxTwoQubitGates?: number;
}

/** ECR as Qiskit defines it, written in stdgates: RZX(π/4) · X(a) · RZX(−π/4), RZX(θ) = H b; CX a,b; RZ(θ) b; CX a,b; H b. */
export const ECR_QASM_DEFINITION =
  'gate ecr _a, _b { h _b; cx _a, _b; rz(pi/4) _b; cx _a, _b; h _b; x _a; h _b; cx _a, _b; rz(-pi/4) _b; cx _a, _b; h _b; }';

/** Multi-qubit phase polynomials are expanded only up to this many qubits (k·2^k gates). */
const MAX_PHASE_POLYNOMIAL_QUBITS = 12;

type LogicalOp = { kind: 'u'; q: number; m: Mat2 } | { kind: 'cx'; c: number; t: number };

/**
 * The lowered ops, counted as they are made: every logical CX becomes at least one ECR, so once
 * the CX count passes the ECR cap the circuit is refused there and then — before a huge op list
 * (millions of entries for a 12-qubit Grover) is held in memory and routed.
 */
class Lowered {
  readonly ops: LogicalOp[] = [];
  readonly #maxCx: number;
  readonly #target: string;
  #cx = 0;
  constructor(maxCx: number, target: string) {
    this.#maxCx = maxCx;
    this.#target = target;
  }
  u(q: number, m: Mat2): void {
    this.ops.push({ kind: 'u', q, m });
  }
  cx(c: number, t: number): void {
    if (++this.#cx > this.#maxCx) throw tooManyEcr(this.#maxCx, this.#target);
    this.ops.push({ kind: 'cx', c, t });
  }
}

function tooManyEcr(maxEcr: number, target: string): TranspileError {
  return new TranspileError(`the circuit needs more than ${maxEcr} two-qubit gates on ${target}; send a smaller problem`);
}

function lowerGate(g: GateOp, out: Lowered): void {
  const q = g.qubits;
  const p = g.params;
  const u = (qubit: number, m: Mat2): void => out.u(qubit, m);
  const cx = (c: number, t: number): void => out.cx(c, t);
  switch (g.name) {
    case 'h': return u(q[0]!, MAT_H);
    case 'x': return u(q[0]!, MAT_X);
    case 'y': return u(q[0]!, MAT_Y);
    case 'z': return u(q[0]!, MAT_Z);
    case 'rx': return u(q[0]!, matRX(p[0]!));
    case 'ry': return u(q[0]!, matRY(p[0]!));
    case 'rz': return u(q[0]!, matRZ(p[0]!));
    case 'cx': return cx(q[0]!, q[1]!);
    case 'cz':
      u(q[1]!, MAT_H);
      cx(q[0]!, q[1]!);
      return u(q[1]!, MAT_H);
    case 'swap':
      cx(q[0]!, q[1]!);
      cx(q[1]!, q[0]!);
      return cx(q[0]!, q[1]!);
    case 'rzz':
      cx(q[0]!, q[1]!);
      u(q[1]!, matRZ(p[0]!));
      return cx(q[0]!, q[1]!);
    case 'mcz':
      return lowerMcz(q, out);
    case 'mcx': {
      const target = q[q.length - 1]!;
      u(target, MAT_H);
      lowerMcz(q, out);
      return u(target, MAT_H);
    }
  }
}

/** Z on |1…1⟩ of `qubits`: the diagonal e^{iπ·AND} as its phase polynomial. */
function lowerMcz(qubits: readonly number[], out: Lowered): void {
  const k = qubits.length;
  if (k > MAX_PHASE_POLYNOMIAL_QUBITS) throw new TranspileError(`a ${k}-qubit multi-controlled gate is beyond the hardware path's ${MAX_PHASE_POLYNOMIAL_QUBITS}-qubit limit`);
  const diag = new Float64Array(2 ** k);
  diag[diag.length - 1] = 1;
  lowerPhasePolynomial(k, diag, -Math.PI, (local) => qubits[local]!, out);
}

function lowerPhasePolynomial(k: number, diag: Float64Array, gamma: number, place: (local: number) => number, out: Lowered): void {
  for (const g of walshGateForm(k, diag, gamma).gates) lowerGate({ ...g, qubits: g.qubits.map(place) }, out);
}

function lower(circuit: Circuit, maxCx: number, target: string): LogicalOp[] {
  const out = new Lowered(maxCx, target);
  let measured = false;
  for (const op of circuit.ops) {
    if (measured) throw new TranspileError('the hardware path measures once, at the end of the circuit');
    switch (op.kind) {
      case 'gate':
        lowerGate(op, out);
        break;
      case 'mixerX':
        for (let q = 0; q < circuit.qubits; q++) out.u(q, matRX(2 * op.beta));
        break;
      case 'diagonal':
        if (op.decomposition !== null) for (const g of op.decomposition) lowerGate(g, out);
        else if (circuit.qubits <= MAX_PHASE_POLYNOMIAL_QUBITS) lowerPhasePolynomial(circuit.qubits, op.diag, op.gamma, (q) => q, out);
        else throw new TranspileError(`the ${circuit.qubits}-qubit layer '${op.label}' has no gate form the hardware path can write (phase polynomials stop at ${MAX_PHASE_POLYNOMIAL_QUBITS} qubits)`);
        break;
      case 'measure':
        measured = true;
        break;
    }
  }
  return out.ops;
}

/** For every pair, the next qubit on a shortest path: next[a·n + b] is a's neighbour towards b. */
function nextHops(n: number, neighbours: readonly number[][]): Int16Array {
  const next = new Int16Array(n * n).fill(-1);
  for (let b = 0; b < n; b++) {
    const queue = [b];
    const seen = new Uint8Array(n);
    seen[b] = 1;
    for (let head = 0; head < queue.length; head++) {
      const v = queue[head]!;
      for (const w of neighbours[v]!) {
        if (seen[w]) continue;
        seen[w] = 1;
        next[w * n + b] = v;
        queue.push(w);
      }
    }
  }
  return next;
}

function bfsOrder(root: number, neighbours: readonly number[][], count: number): number[] {
  const order = [root];
  const seen = new Set(order);
  for (let head = 0; head < order.length && order.length < count; head++) {
    for (const w of neighbours[order[head]!]!) {
      if (seen.has(w)) continue;
      seen.add(w);
      order.push(w);
    }
  }
  return order.slice(0, count);
}

export function transpileToIsa(circuit: Circuit, target: HardwareTarget = EAGLE_R3_TARGET, options: TranspileOptions = {}): IsaCircuit {
  const n = circuit.qubits;
  const physical = target.qubits;
  if (n > physical) throw new TranspileError(`the circuit has ${n} qubits; ${target.name} has ${physical}`);
  const neighbours: number[][] = Array.from({ length: physical }, () => []);
  const runs = new Set<number>();
  for (const [a, b] of target.edges) {
    if (!neighbours[a]!.includes(b)) neighbours[a]!.push(b);
    if (!neighbours[b]!.includes(a)) neighbours[b]!.push(a);
    runs.add(a * physical + b);
    if (!target.directed) runs.add(b * physical + a);
  }
  const layout = options.initialLayout ? [...options.initialLayout] : bfsOrder(options.root ?? 0, neighbours, n);
  if (layout.length !== n || new Set(layout).size !== n || layout.some((p) => !Number.isInteger(p) || p < 0 || p >= physical)) {
    throw new TranspileError(`no layout of ${n} distinct connected qubits on ${target.name}`);
  }
  const next = nextHops(physical, neighbours);
  const maxEcr = options.maxTwoQubitGates ?? 20_000;

  const pos = [...layout];
  const occupant = new Int32Array(physical).fill(-1);
  pos.forEach((p, q) => (occupant[p] = q));
  const pending: (Mat2 | undefined)[] = new Array(physical);
  const ops: IsaOp[] = [];
  let ecrCount = 0;
  let swaps = 0;

  const pend = (p: number, m: Mat2): void => {
    pending[p] = mulMat2(m, pending[p] ?? MAT_I);
  };
  const flush = (p: number): void => {
    const m = pending[p];
    if (m === undefined) return;
    pending[p] = undefined;
    for (const g of decomposeZsx(m)) ops.push(g.name === 'rz' ? { name: 'rz', qubits: [p], angle: g.angle } : { name: g.name, qubits: [p] });
  };
  const ecr = (a: number, b: number): void => {
    if (++ecrCount > maxEcr) throw tooManyEcr(maxEcr, target.name);
    flush(a);
    flush(b);
    ops.push({ name: 'ecr', qubits: [a, b] });
  };
  const physicalCx = (c: number, t: number): void => {
    if (runs.has(c * physical + t)) {
      pend(c, MAT_SDG);
      pend(t, MAT_SXDG);
      ecr(c, t);
      pend(c, MAT_X);
    } else {
      // CX(c,t) = (H⊗H)·CX(t,c)·(H⊗H), and CX(t,c) runs on the coupler's own direction.
      pend(c, MAT_H);
      pend(t, MAT_H);
      physicalCx(t, c);
      pend(c, MAT_H);
      pend(t, MAT_H);
    }
  };

  for (const op of lower(circuit, maxEcr, target.name)) {
    if (op.kind === 'u') {
      pend(pos[op.q]!, op.m);
      continue;
    }
    let pc = pos[op.c]!;
    const pt = pos[op.t]!;
    while (!neighbours[pc]!.includes(pt)) {
      const hop = next[pc * physical + pt]!;
      if (hop < 0) throw new TranspileError(`qubits ${pc} and ${pt} are not connected on ${target.name}`);
      physicalCx(pc, hop);
      physicalCx(hop, pc);
      physicalCx(pc, hop);
      swaps++;
      const other = occupant[hop]!;
      occupant[hop] = op.c;
      occupant[pc] = other;
      if (other >= 0) pos[other] = pc;
      pos[op.c] = hop;
      pc = hop;
    }
    physicalCx(pc, pt);
  }
  for (let p = 0; p < physical; p++) flush(p);

  const level = new Map<number, number>();
  const gates: Record<string, number> = {};
  for (const op of ops) {
    gates[op.name] = (gates[op.name] ?? 0) + 1;
    const top = Math.max(...op.qubits.map((q) => level.get(q) ?? 0)) + 1;
    for (const q of op.qubits) level.set(q, top);
  }
  gates.measure = n;
  const depth = Math.max(0, ...level.values()) + 1;
  return { target: target.name, logicalQubits: n, ops, initialLayout: layout, finalLayout: pos, swaps, depth, gates, qasm: isaQasm(ops, pos) };
}

/** OpenQASM 3 with hardware qubits, as Qiskit's exporter writes an ISA circuit. */
function isaQasm(ops: readonly IsaOp[], finalLayout: readonly number[]): string {
  const lines = ['OPENQASM 3.0;', 'include "stdgates.inc";'];
  if (ops.some((op) => op.name === 'ecr')) lines.push(ECR_QASM_DEFINITION);
  lines.push(`bit[${finalLayout.length}] c;`);
  for (const op of ops) {
    if (op.name === 'rz') lines.push(`rz(${op.angle}) $${op.qubits[0]};`);
    else lines.push(`${op.name} ${op.qubits.map((q) => `$${q}`).join(', ')};`);
  }
  lines.push(`barrier ${finalLayout.map((p) => `$${p}`).join(', ')};`);
  finalLayout.forEach((p, i) => lines.push(`c[${i}] = measure $${p};`));
  return `${lines.join('\n')}\n`;
}
