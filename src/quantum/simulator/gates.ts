import type { StateVector } from './state-vector.ts';

/**
 * A 2×2 complex matrix, row-major, as interleaved (re, im) pairs:
 * [re00, im00, re01, im01, re10, im10, re11, im11].
 */
export type Mat2 = readonly [number, number, number, number, number, number, number, number];

const SQRT1_2 = Math.SQRT1_2;

export const MAT_I: Mat2 = [1, 0, 0, 0, 0, 0, 1, 0];
export const MAT_X: Mat2 = [0, 0, 1, 0, 1, 0, 0, 0];
export const MAT_Y: Mat2 = [0, 0, 0, -1, 0, 1, 0, 0];
export const MAT_Z: Mat2 = [1, 0, 0, 0, 0, 0, -1, 0];
export const MAT_H: Mat2 = [SQRT1_2, 0, SQRT1_2, 0, SQRT1_2, 0, -SQRT1_2, 0];

/** RX(θ) = exp(-iθX/2). */
export function matRX(theta: number): Mat2 {
  const c = Math.cos(theta / 2);
  const s = Math.sin(theta / 2);
  return [c, 0, 0, -s, 0, -s, c, 0];
}

/** RY(θ) = exp(-iθY/2). */
export function matRY(theta: number): Mat2 {
  const c = Math.cos(theta / 2);
  const s = Math.sin(theta / 2);
  return [c, 0, -s, 0, s, 0, c, 0];
}

/** RZ(θ) = exp(-iθZ/2) = diag(e^{-iθ/2}, e^{iθ/2}). */
export function matRZ(theta: number): Mat2 {
  const c = Math.cos(theta / 2);
  const s = Math.sin(theta / 2);
  return [c, -s, 0, 0, 0, 0, c, s];
}

/** Phase(φ) = diag(1, e^{iφ}) (OpenQASM `p`). */
export function matPhase(phi: number): Mat2 {
  return [1, 0, 0, 0, 0, 0, Math.cos(phi), Math.sin(phi)];
}

function checkQubit(s: StateVector, q: number): void {
  if (!Number.isInteger(q) || q < 0 || q >= s.qubits) {
    throw new RangeError(`qubit ${q} out of range for a ${s.qubits}-qubit state`);
  }
}

/**
 * m on `target` for every index pair (i, i + 2^target) whose control bits (cmask) are all 1;
 * cmask 0 means uncontrolled.
 */
function pairKernel(s: StateVector, target: number, m: Mat2, cmask: number): void {
  const re = s.re;
  const im = s.im;
  const [ar, ai, br, bi, cr, ci, dr, di] = m;
  const n = re.length;
  const stride = 1 << target;
  for (let base = 0; base < n; base += stride << 1) {
    const end = base + stride;
    for (let i = base; i < end; i++) {
      if ((i & cmask) !== cmask) continue;
      const j = i + stride;
      const xr = re[i]!;
      const xi = im[i]!;
      const yr = re[j]!;
      const yi = im[j]!;
      re[i] = ar * xr - ai * xi + br * yr - bi * yi;
      im[i] = ar * xi + ai * xr + br * yi + bi * yr;
      re[j] = cr * xr - ci * xi + dr * yr - di * yi;
      im[j] = cr * xi + ci * xr + dr * yi + di * yr;
    }
  }
}

/** Applies a 2×2 matrix to qubit q. */
export function applyMatrix1(s: StateVector, q: number, m: Mat2): void {
  checkQubit(s, q);
  pairKernel(s, q, m, 0);
}

export function applyH(s: StateVector, q: number): void {
  applyMatrix1(s, q, MAT_H);
}

export function applyX(s: StateVector, q: number): void {
  checkQubit(s, q);
  const re = s.re;
  const im = s.im;
  const n = re.length;
  const stride = 1 << q;
  for (let base = 0; base < n; base += stride << 1) {
    const end = base + stride;
    for (let i = base; i < end; i++) {
      const j = i + stride;
      const tr = re[i]!;
      const ti = im[i]!;
      re[i] = re[j]!;
      im[i] = im[j]!;
      re[j] = tr;
      im[j] = ti;
    }
  }
}

export function applyY(s: StateVector, q: number): void {
  applyMatrix1(s, q, MAT_Y);
}

/** Multiplies every amplitude whose bit q is 1 by e^{iφ}. */
export function applyPhase(s: StateVector, q: number, phi: number): void {
  checkQubit(s, q);
  applyBitPhase(s, 1 << q, Math.cos(phi), Math.sin(phi));
}

export function applyZ(s: StateVector, q: number): void {
  checkQubit(s, q);
  applyBitPhase(s, 1 << q, -1, 0);
}

/** amp[i] *= (c + i·sn) for every i with (i & mask) === mask. */
function applyBitPhase(s: StateVector, mask: number, c: number, sn: number): void {
  const re = s.re;
  const im = s.im;
  for (let i = 0; i < re.length; i++) {
    if ((i & mask) === mask) {
      const xr = re[i]!;
      const xi = im[i]!;
      re[i] = c * xr - sn * xi;
      im[i] = c * xi + sn * xr;
    }
  }
}

export function applyRX(s: StateVector, q: number, theta: number): void {
  applyMatrix1(s, q, matRX(theta));
}

export function applyRY(s: StateVector, q: number, theta: number): void {
  applyMatrix1(s, q, matRY(theta));
}

export function applyRZ(s: StateVector, q: number, theta: number): void {
  checkQubit(s, q);
  const re = s.re;
  const im = s.im;
  const c = Math.cos(theta / 2);
  const sn = Math.sin(theta / 2);
  const bit = 1 << q;
  for (let i = 0; i < re.length; i++) {
    const sgn = (i & bit) === 0 ? -sn : sn;
    const xr = re[i]!;
    const xi = im[i]!;
    re[i] = c * xr - sgn * xi;
    im[i] = c * xi + sgn * xr;
  }
}

/**
 * Applies m to `target` on the subspace where every control qubit is 1
 * (controlled-X is CNOT, two controls give Toffoli, and so on).
 */
export function applyControlled1(s: StateVector, controls: readonly number[], target: number, m: Mat2): void {
  checkQubit(s, target);
  let cmask = 0;
  for (const c of controls) {
    checkQubit(s, c);
    if (c === target) throw new RangeError(`qubit ${c} is both control and target`);
    if ((cmask & (1 << c)) !== 0) throw new RangeError(`control qubit ${c} repeated`);
    cmask |= 1 << c;
  }
  pairKernel(s, target, m, cmask);
}

export function applyCX(s: StateVector, control: number, target: number): void {
  applyControlled1(s, [control], target, MAT_X);
}

/** Multi-controlled Z: negates the amplitudes whose listed qubits are all 1 (symmetric in them). */
export function applyMCZ(s: StateVector, qubits: readonly number[]): void {
  let mask = 0;
  for (const q of qubits) {
    checkQubit(s, q);
    if ((mask & (1 << q)) !== 0) throw new RangeError(`qubit ${q} repeated`);
    mask |= 1 << q;
  }
  applyBitPhase(s, mask, -1, 0);
}

export function applyCZ(s: StateVector, a: number, b: number): void {
  applyMCZ(s, [a, b]);
}

export function applySwap(s: StateVector, a: number, b: number): void {
  checkQubit(s, a);
  checkQubit(s, b);
  if (a === b) return;
  const re = s.re;
  const im = s.im;
  const ma = 1 << a;
  const mb = 1 << b;
  for (let i = 0; i < re.length; i++) {
    // visit each |..1_a..0_b..> once and swap it with |..0_a..1_b..>
    if ((i & ma) !== 0 && (i & mb) === 0) {
      const j = (i ^ ma) | mb;
      const tr = re[i]!;
      const ti = im[i]!;
      re[i] = re[j]!;
      im[i] = im[j]!;
      re[j] = tr;
      im[j] = ti;
    }
  }
}

/** RZZ(θ) = exp(-iθ Z_a Z_b / 2): phase e^{-iθ/2} where bits a, b agree, e^{iθ/2} where they differ. */
export function applyRZZ(s: StateVector, a: number, b: number, theta: number): void {
  checkQubit(s, a);
  checkQubit(s, b);
  if (a === b) throw new RangeError('RZZ needs two distinct qubits');
  const re = s.re;
  const im = s.im;
  const c = Math.cos(theta / 2);
  const sn = Math.sin(theta / 2);
  for (let i = 0; i < re.length; i++) {
    const parity = ((i >>> a) ^ (i >>> b)) & 1;
    const sg = parity === 0 ? -sn : sn;
    const xr = re[i]!;
    const xi = im[i]!;
    re[i] = c * xr - sg * xi;
    im[i] = c * xi + sg * xr;
  }
}

/**
 * The QAOA cost layer as one element-wise pass: amp[z] *= exp(-i·gamma·diag[z]).
 * Integer-valued diagonals with few distinct values (MaxCut) go through a small phase table.
 */
export function applyDiagonalPhase(s: StateVector, diag: Float64Array, gamma: number): void {
  const re = s.re;
  const im = s.im;
  if (diag.length !== re.length) throw new RangeError(`diagonal length ${diag.length} != ${re.length}`);
  for (let i = 0; i < re.length; i++) {
    const t = -gamma * diag[i]!;
    const c = Math.cos(t);
    const sn = Math.sin(t);
    const xr = re[i]!;
    const xi = im[i]!;
    re[i] = c * xr - sn * xi;
    im[i] = c * xi + sn * xr;
  }
}

/** The QAOA transverse-field mixer exp(-iβ Σ_q X_q), i.e. RX(2β) on every qubit. */
export function applyMixerX(s: StateVector, beta: number): void {
  const m = matRX(2 * beta);
  for (let q = 0; q < s.qubits; q++) applyMatrix1(s, q, m);
}
