/**
 * AssemblyScript source of the QAOA kernel's passes in WebAssembly SIMD (f64x2), compiled to
 * qaoa-passes.wasm by `npm run build:kernels` (committed; test/quantum/simulator/wasm-build.test.ts
 * rebuilds it and compares byte for byte). Not TypeScript for Node: tsc and eslint skip this file.
 *
 * Each function does exactly what its namesake in qaoa-kernel.ts does, with the same floating-point
 * operations in the same order (a + t·b, no fused multiply-add), so the two kernels agree bit for
 * bit; SIMD only runs two neighbouring amplitudes side by side. Arguments: byte addresses of the
 * arrays in linear memory (re, im: f64; index: u16; tables: f64) and amplitude indices.
 */

// @ts-nocheck -- AssemblyScript types (usize, v128, f64x2) and decorators

/**
 * x + t·y and x − t·y. Built twice (asconfig.json's targets): "exact" rounds the product and then
 * the sum, as the JavaScript passes do (bit for bit the same); "fma" (relaxed SIMD enabled) lets
 * the engine fuse them into one multiply-add, rounded once, where the processor has one. The
 * branch is on a compile-time constant: each build holds only its own form.
 */
@inline function axpy(x: v128, t: v128, y: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f64x2.relaxed_madd(t, y, x);
  return f64x2.add(x, f64x2.mul(t, y));
}
@inline function axmy(x: v128, t: v128, y: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f64x2.relaxed_nmadd(t, y, x);
  return f64x2.sub(x, f64x2.mul(t, y));
}

/** The scaled RX on one qubit for two neighbouring pairs (x at px, y at px + s bytes). */
@inline function rx2v(pr: usize, pi: usize, s: usize, t: v128): void {
  const xr = v128.load(pr);
  const xi = v128.load(pi);
  const yr = v128.load(pr + s);
  const yi = v128.load(pi + s);
  v128.store(pr, axpy(xr, t, yi));
  v128.store(pi, axmy(xi, t, yr));
  v128.store(pr + s, axpy(yr, t, xi));
  v128.store(pi + s, axmy(yi, t, xr));
}

/** The scaled RX on two qubits (strides s1, s2 bytes) for two neighbouring groups of four. */
@inline function rx4v(pr: usize, pi: usize, s1: usize, s2: usize, t: v128): void {
  const a0r = v128.load(pr);
  const a0i = v128.load(pi);
  const a1r = v128.load(pr + s1);
  const a1i = v128.load(pi + s1);
  const a2r = v128.load(pr + s2);
  const a2i = v128.load(pi + s2);
  const a3r = v128.load(pr + s1 + s2);
  const a3i = v128.load(pi + s1 + s2);
  const b0r = axpy(a0r, t, a1i);
  const b0i = axmy(a0i, t, a1r);
  const b1r = axpy(a1r, t, a0i);
  const b1i = axmy(a1i, t, a0r);
  const b2r = axpy(a2r, t, a3i);
  const b2i = axmy(a2i, t, a3r);
  const b3r = axpy(a3r, t, a2i);
  const b3i = axmy(a3i, t, a2r);
  v128.store(pr, axpy(b0r, t, b2i));
  v128.store(pi, axmy(b0i, t, b2r));
  v128.store(pr + s2, axpy(b2r, t, b0i));
  v128.store(pi + s2, axmy(b2i, t, b0r));
  v128.store(pr + s1, axpy(b1r, t, b3i));
  v128.store(pi + s1, axmy(b1i, t, b3r));
  v128.store(pr + s1 + s2, axpy(b3r, t, b1i));
  v128.store(pi + s1 + s2, axmy(b3i, t, b1r));
}

/** Lanes swapped: (v1, v0). */
@inline function swap(v: v128): v128 {
  return i64x2.shuffle(v, v, 1, 0);
}

/** Qubit 0 inside one vector (pair = its two lanes): x' = x + t·swap(y) as in rx2 with s = 1. */
@inline function q0re(r: v128, i: v128, t: v128): v128 {
  return axpy(r, t, swap(i));
}
@inline function q0im(r: v128, i: v128, t: v128): v128 {
  return axmy(i, t, swap(r));
}

/**
 * The scaled RX on qubits 0 and 1 of the four amplitudes (v0r + i·v0i, v1r + i·v1i) whose first
 * sits at byte pr / pi, stored there: qubit 0 pairs the lanes of each vector, qubit 1 the vectors.
 */
@inline function mix01(pr: usize, pi: usize, v0r: v128, v0i: v128, v1r: v128, v1i: v128, t: v128): void {
  const b0r = q0re(v0r, v0i, t);
  const b0i = q0im(v0r, v0i, t);
  const b1r = q0re(v1r, v1i, t);
  const b1i = q0im(v1r, v1i, t);
  v128.store(pr, axpy(b0r, t, b1i));
  v128.store(pi, axmy(b0i, t, b1r));
  v128.store(pr + 16, axpy(b1r, t, b0i));
  v128.store(pi + 16, axmy(b1i, t, b0r));
}

/** RX(2β) (scaled) on qubits from..L-1 of the block of 2^L amplitudes starting at amplitude o. */
export function mixLow(re: usize, im: usize, o: u32, from: u32, L: u32, tt: f64): void {
  const t = f64x2.splat(tt);
  const start: usize = (<usize>o) << 3;
  const end: usize = start + ((<usize>1) << (L + 3));
  let q = from;
  if (q == 0 && L >= 2) {
    // qubits 0 and 1: four amplitudes are two vectors; qubit 0 pairs the lanes of each vector
    for (let g = start; g < end; g += 32) {
      mix01(re + g, im + g, v128.load(re + g), v128.load(im + g), v128.load(re + g + 16), v128.load(im + g + 16), t);
    }
    q = 2;
  }
  for (; q + 1 < L; q += 2) {
    const s1: usize = (<usize>1) << (q + 3);
    const s2 = s1 << 1;
    const step = s2 << 1;
    for (let g = start; g < end; g += step) {
      const stop = g + s1;
      for (let i = g; i < stop; i += 16) rx4v(re + i, im + i, s1, s2, t);
    }
  }
  if (q < L) {
    if (q == 0) {
      // a single qubit 0 (L = 1): one vector holds the pair
      const r = v128.load(re + start);
      const i = v128.load(im + start);
      v128.store(re + start, q0re(r, i, t));
      v128.store(im + start, q0im(r, i, t));
      return;
    }
    const s1: usize = (<usize>1) << (q + 3);
    for (let g = start; g < end; g += s1 << 1) {
      const stop = g + s1;
      for (let i = g; i < stop; i += 16) rx2v(re + i, im + i, s1, t);
    }
  }
}

/**
 * RX(2β) (scaled) on qubits L..n-1 for the tile of C consecutive low offsets starting at off
 * (C even: the lanes of a vector are neighbouring offsets).
 */
export function mixHigh(re: usize, im: usize, off: u32, C: u32, L: u32, n: u32, tt: f64): void {
  const t = f64x2.splat(tt);
  const N: usize = (<usize>1) << (n + 3);
  const B: usize = (<usize>1) << (L + 3);
  const width: usize = (<usize>C) << 3;
  const base0: usize = (<usize>off) << 3;
  let q = L;
  for (; q + 1 < n; q += 2) {
    const s1: usize = (<usize>1) << (q + 3);
    const s2 = s1 << 1;
    for (let g: usize = 0; g < N; g += s2 << 1) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + base0;
        for (let k: usize = 0; k < width; k += 16) rx4v(re + base + k, im + base + k, s1, s2, t);
      }
    }
  }
  if (q < n) {
    const s1: usize = (<usize>1) << (q + 3);
    for (let g: usize = 0; g < N; g += s1 << 1) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + base0;
        for (let k: usize = 0; k < width; k += 16) rx2v(re + base + k, im + base + k, s1, t);
      }
    }
  }
}

/** The table entry (byte offset) for amplitude z: index[z ^ xmask] · 8. */
@inline function entry(index: usize, z: u32, xmask: u32): usize {
  return (<usize>load<u16>(index + ((<usize>(z ^ xmask)) << 1))) << 3;
}

/**
 * The layer's phase from a prepared diagonal's table (init: the first layer writes amp0·phase),
 * two amplitudes at a time: the table entries are gathered into vectors, the products are SIMD.
 */
export function phaseTable(re: usize, im: usize, index: usize, phr: usize, phi: usize, from: u32, to: u32, xmask: u32, init: bool, amp0: f64): void {
  let z = from;
  if (init) {
    const a0 = f64x2.splat(amp0);
    for (; z + 1 < to; z += 2) {
      const ka = entry(index, z, xmask);
      const kb = entry(index, z + 1, xmask);
      const a: usize = (<usize>z) << 3;
      v128.store(re + a, f64x2.mul(a0, f64x2.replace_lane(v128.load64_zero(phr + ka), 1, load<f64>(phr + kb))));
      v128.store(im + a, f64x2.mul(a0, f64x2.replace_lane(v128.load64_zero(phi + ka), 1, load<f64>(phi + kb))));
    }
  } else {
    for (; z + 1 < to; z += 2) {
      const ka = entry(index, z, xmask);
      const kb = entry(index, z + 1, xmask);
      const pr = f64x2.replace_lane(v128.load64_zero(phr + ka), 1, load<f64>(phr + kb));
      const pi = f64x2.replace_lane(v128.load64_zero(phi + ka), 1, load<f64>(phi + kb));
      const a: usize = (<usize>z) << 3;
      const xr = v128.load(re + a);
      const xi = v128.load(im + a);
      v128.store(re + a, axmy(f64x2.mul(xr, pr), xi, pi));
      v128.store(im + a, axpy(f64x2.mul(xr, pi), xi, pr));
    }
  }
  // an odd count leaves one amplitude
  for (; z < to; z++) {
    const k = entry(index, z, xmask);
    const a: usize = (<usize>z) << 3;
    if (init) {
      store<f64>(re + a, amp0 * load<f64>(phr + k));
      store<f64>(im + a, amp0 * load<f64>(phi + k));
    } else {
      const pr = load<f64>(phr + k);
      const pi = load<f64>(phi + k);
      const xr = load<f64>(re + a);
      const xi = load<f64>(im + a);
      store<f64>(re + a, xr * pr - xi * pi);
      store<f64>(im + a, xr * pi + xi * pr);
    }
  }
}

/** The table's entries at byte offsets ka and kb as one vector. */
@inline function gather(table: usize, ka: usize, kb: usize): v128 {
  return f64x2.replace_lane(v128.load64_zero(table + ka), 1, load<f64>(table + kb));
}

/**
 * phaseTable then mixLow for qubits 0 and 1, in one sweep over amplitudes [from, to) (a multiple
 * of 4 of them): each group of four is multiplied by its phase and rotated in registers, stored
 * once. The same operations in the same order as the two passes, so the same results bit for bit.
 */
export function phaseMix01(re: usize, im: usize, index: usize, phr: usize, phi: usize, from: u32, to: u32, xmask: u32, init: bool, amp0: f64, tt: f64): void {
  const t = f64x2.splat(tt);
  const a0 = f64x2.splat(amp0);
  for (let z = from; z < to; z += 4) {
    const k0 = entry(index, z, xmask);
    const k1 = entry(index, z + 1, xmask);
    const k2 = entry(index, z + 2, xmask);
    const k3 = entry(index, z + 3, xmask);
    const p0r = gather(phr, k0, k1);
    const p0i = gather(phi, k0, k1);
    const p1r = gather(phr, k2, k3);
    const p1i = gather(phi, k2, k3);
    const a: usize = (<usize>z) << 3;
    if (init) {
      mix01(re + a, im + a, f64x2.mul(a0, p0r), f64x2.mul(a0, p0i), f64x2.mul(a0, p1r), f64x2.mul(a0, p1i), t);
    } else {
      const x0r = v128.load(re + a);
      const x0i = v128.load(im + a);
      const x1r = v128.load(re + a + 16);
      const x1i = v128.load(im + a + 16);
      mix01(
        re + a,
        im + a,
        axmy(f64x2.mul(x0r, p0r), x0i, p0i),
        axpy(f64x2.mul(x0r, p0i), x0i, p0r),
        axmy(f64x2.mul(x1r, p1r), x1i, p1i),
        axpy(f64x2.mul(x1r, p1i), x1i, p1r),
        t,
      );
    }
  }
}

/** Σ |amp|²·values[index[z ^ xmask]] over z in [from, to), in order. */
export function expectIndexed(re: usize, im: usize, index: usize, values: usize, from: u32, to: u32, xmask: u32): f64 {
  let sum: f64 = 0;
  for (let z = from; z < to; z++) {
    const a: usize = (<usize>z) << 3;
    const r = load<f64>(re + a);
    const i = load<f64>(im + a);
    sum += (r * r + i * i) * load<f64>(values + entry(index, z, xmask));
  }
  return sum;
}
