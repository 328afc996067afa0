import type { Mat2 } from '../simulator/gates.ts';

/** A single-qubit instruction of IBM's basis: rz(θ), sx (√X) or x. */
export type ZsxGate = { name: 'rz'; angle: number } | { name: 'sx' } | { name: 'x' };

/** √X as a Mat2 (row-major, interleaved re/im): ½[[1+i, 1-i], [1-i, 1+i]]. */
export const MAT_SX: Mat2 = [0.5, 0.5, 0.5, -0.5, 0.5, -0.5, 0.5, 0.5];
/** √X†. */
export const MAT_SXDG: Mat2 = [0.5, -0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5];
export const MAT_S: Mat2 = [1, 0, 0, 0, 0, 0, 0, 1];
export const MAT_SDG: Mat2 = [1, 0, 0, 0, 0, 0, 0, -1];

/** a·b (apply b, then a). */
export function mulMat2(a: Mat2, b: Mat2): Mat2 {
  const out = new Array<number>(8);
  for (let r = 0; r < 2; r++) {
    for (let c = 0; c < 2; c++) {
      let re = 0;
      let im = 0;
      for (let k = 0; k < 2; k++) {
        const ar = a[(r * 2 + k) * 2]!;
        const ai = a[(r * 2 + k) * 2 + 1]!;
        const br = b[(k * 2 + c) * 2]!;
        const bi = b[(k * 2 + c) * 2 + 1]!;
        re += ar * br - ai * bi;
        im += ar * bi + ai * br;
      }
      out[(r * 2 + c) * 2] = re;
      out[(r * 2 + c) * 2 + 1] = im;
    }
  }
  return out as unknown as Mat2;
}

const EPS = 1e-10;

/** An angle in (-π, π]; rz angles that differ by 2π differ only by a global phase. */
function wrap(angle: number): number {
  let a = angle % (2 * Math.PI);
  if (a <= -Math.PI) a += 2 * Math.PI;
  else if (a > Math.PI) a -= 2 * Math.PI;
  return a;
}

function rz(angle: number): ZsxGate[] {
  const a = wrap(angle);
  return Math.abs(a) < EPS ? [] : [{ name: 'rz', angle: a }];
}

/**
 * Any single-qubit unitary as rz/sx/x gates, in circuit order, equal up to a global phase.
 * U = e^{iα}·RZ(φ)·RY(θ)·RZ(λ) (ZYZ Euler angles); the general case is rz(λ) sx rz(θ+π) sx
 * rz(φ+π) (the "ZSX" form IBM backends run); θ = 0 needs one rz, θ = π/2 one sx
 * (RY(π/2) = RZ(π/2)·RX(π/2)·RZ(-π/2)), θ = π one x (RY(π) ∝ X·RZ(π), and RZ(φ)·X = X·RZ(−φ)).
 */
export function decomposeZsx(m: Mat2): ZsxGate[] {
  const [ar, ai, br, bi, cr, ci, dr, di] = m;
  // Scale to SU(2) (divide by √det): V = [[e^{-i(φ+λ)/2}·cos, −e^{-i(φ−λ)/2}·sin], [e^{i(φ−λ)/2}·sin, e^{i(φ+λ)/2}·cos]].
  // The sign of √det is free: −V only adds 2π to φ, a global phase.
  const detRe = ar * dr - ai * di - (br * cr - bi * ci);
  const detIm = ar * di + ai * dr - (br * ci + bi * cr);
  const half = Math.atan2(detIm, detRe) / 2;
  const scale = 1 / Math.sqrt(Math.hypot(detRe, detIm));
  const rot = (re: number, im: number): [number, number] => [scale * (re * Math.cos(half) + im * Math.sin(half)), scale * (im * Math.cos(half) - re * Math.sin(half))];
  const [v10r, v10i] = rot(cr, ci);
  const [v11r, v11i] = rot(dr, di);
  const cosHalf = Math.hypot(v11r, v11i);
  const sinHalf = Math.hypot(v10r, v10i);
  const theta = 2 * Math.atan2(sinHalf, cosHalf);
  const a11 = cosHalf > EPS ? Math.atan2(v11i, v11r) : 0;
  const a10 = sinHalf > EPS ? Math.atan2(v10i, v10r) : 0;
  const phi = a11 + a10;
  const lambda = a11 - a10;
  if (Math.abs(theta) < EPS) return rz(phi + lambda);
  if (Math.abs(theta - Math.PI) < EPS) return [...rz(lambda - phi + Math.PI), { name: 'x' }];
  if (Math.abs(theta - Math.PI / 2) < EPS) return [...rz(lambda - Math.PI / 2), { name: 'sx' }, ...rz(phi + Math.PI / 2)];
  return [...rz(lambda), { name: 'sx' }, ...rz(theta + Math.PI), { name: 'sx' }, ...rz(phi + Math.PI)];
}
