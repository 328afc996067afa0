import type { Rng } from './rng.ts';
import type { StateVector } from './state-vector.ts';

/** |amp[z]|² for every basis state z. */
export function probabilities(s: StateVector): Float64Array {
  const { re, im } = s;
  const p = new Float64Array(re.length);
  for (let i = 0; i < re.length; i++) p[i] = re[i]! * re[i]! + im[i]! * im[i]!;
  return p;
}

/** Probability of one basis state. */
export function probabilityOf(s: StateVector, index: number): number {
  const r = s.re[index] ?? 0;
  const i = s.im[index] ?? 0;
  return r * r + i * i;
}

/** ⟨ψ|D|ψ⟩ for a diagonal observable D: Σ_z |amp[z]|²·diag[z]. */
export function expectationDiagonal(s: StateVector, diag: Float64Array): number {
  const { re, im } = s;
  if (diag.length !== re.length) throw new RangeError(`diagonal length ${diag.length} != ${re.length}`);
  let sum = 0;
  for (let i = 0; i < re.length; i++) sum += (re[i]! * re[i]! + im[i]! * im[i]!) * diag[i]!;
  return sum;
}

/** Probability that qubit q measures 1. */
export function probabilityOne(s: StateVector, q: number): number {
  const { re, im } = s;
  const bit = 1 << q;
  let sum = 0;
  for (let i = 0; i < re.length; i++) if ((i & bit) !== 0) sum += re[i]! * re[i]! + im[i]! * im[i]!;
  return sum;
}

/**
 * Samples `shots` measurements of all qubits: basis index → count (only indices that occurred).
 * Draws the shots' uniforms first, sorts them, and walks the cumulative distribution once:
 * O(2^n + shots·log shots) time and O(shots) extra memory, no 2^n-sized buffer.
 * The distribution is renormalised by Σ|amp|², so round-off in the norm does not bias the tail.
 */
export function sampleCounts(s: StateVector, shots: number, rng: Rng): Map<number, number> {
  if (!Number.isInteger(shots) || shots < 0) throw new RangeError(`shots must be a non-negative integer, got ${shots}`);
  const counts = new Map<number, number>();
  if (shots === 0) return counts;
  const { re, im } = s;
  const total = s.norm2();
  if (!(total > 0)) throw new RangeError('cannot sample from a zero state');
  const u = new Float64Array(shots);
  for (let k = 0; k < shots; k++) u[k] = rng.next() * total;
  u.sort();
  let k = 0;
  let cum = 0;
  let last = 0;
  for (let i = 0; i < re.length && k < shots; i++) {
    const p = re[i]! * re[i]! + im[i]! * im[i]!;
    if (p === 0) continue;
    last = i;
    cum += p;
    let hits = 0;
    while (k < shots && u[k]! < cum) {
      hits++;
      k++;
    }
    if (hits > 0) counts.set(i, (counts.get(i) ?? 0) + hits);
  }
  // uniforms at the very top of [0, total) that round-off left unassigned go to the last state
  if (k < shots) counts.set(last, (counts.get(last) ?? 0) + (shots - k));
  return counts;
}

/** Index of the most probable basis state (the lowest index on ties). */
export function mostLikely(s: StateVector): number {
  const { re, im } = s;
  let best = 0;
  let bestP = -1;
  for (let i = 0; i < re.length; i++) {
    const p = re[i]! * re[i]! + im[i]! * im[i]!;
    if (p > bestP) {
      bestP = p;
      best = i;
    }
  }
  return best;
}

/** The k most probable basis states, most probable first. */
export function topStates(s: StateVector, k: number): { index: number; probability: number }[] {
  const { re, im } = s;
  const top: { index: number; probability: number }[] = [];
  for (let i = 0; i < re.length; i++) {
    const p = re[i]! * re[i]! + im[i]! * im[i]!;
    if (top.length < k || p > top[top.length - 1]!.probability) {
      top.push({ index: i, probability: p });
      top.sort((a, b) => b.probability - a.probability || a.index - b.index);
      if (top.length > k) top.pop();
    }
  }
  return top;
}

/** Formats a basis index as a bitstring, qubit n-1 first (Qiskit's display order). */
export function toBitstring(index: number, qubits: number): string {
  return index.toString(2).padStart(qubits, '0');
}
