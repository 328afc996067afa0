/**
 * The QAOA hot path: p layers of (cost phase, transverse mixer) on |+>^n, then ⟨C⟩, in 2 passes
 * over memory per layer instead of the n + 1 a gate-by-gate evaluation makes.
 *
 * - Pass "low" walks the state in blocks of 2^L amplitudes (L = lowBits, a block of re + im fits
 *   in L2): it multiplies by the layer's phase e^{-iγ·C(z)} (a table lookup per amplitude for a
 *   prepared diagonal), then applies RX(2β) for qubits 0..L-1 inside the block, two qubits per
 *   sweep (radix-4 butterflies: 4 amplitudes loaded once, both rotations done in registers).
 * - Pass "high" walks tiles: a tile is `tile` consecutive low offsets times every value of the
 *   high bits L..n-1 (2^(n-L)·tile amplitudes, cache-sized); it applies RX(2β) for the high qubits,
 *   again two per sweep, and in the last layer accumulates Σ|amp|²·C(z) while the tile is hot.
 * The first layer writes e^{-iγC(z)}/√N directly, so |+>^n is never materialised.
 *
 * Blocks and tiles are independent, so a thread takes a contiguous share of each pass and the
 * passes are separated by a barrier: the same code runs single-threaded (no-op barrier) and in
 * the worker pool (src/quantum/simulator/parallel.ts).
 */

export interface QaoaJob {
  n: number;
  re: Float64Array;
  im: Float64Array;
  /** Prepared diagonal: values[index[z]], or raw[z]. */
  index: Uint16Array | null;
  raw: Float64Array | null;
  values: Float64Array;
  gammas: Float64Array;
  betas: Float64Array;
  /** Accumulate Σ|amp|²·C(z) in the last pass. */
  expectation: boolean;
  lowBits: number;
  tile: number;
}

export const DEFAULT_LOW_BITS = 13;
export const DEFAULT_TILE = 8;

function share(count: number, thread: number, threads: number): [number, number] {
  return [Math.floor((count * thread) / threads), Math.floor((count * (thread + 1)) / threads)];
}

/**
 * Runs this thread's share of the schedule; returns its part of the expectation (0 when
 * job.expectation is false). `barrier` must block until every thread has reached it.
 */
export function runQaoaShare(job: QaoaJob, thread: number, threads: number, barrier: () => void): number {
  const { n, gammas, betas } = job;
  const p = gammas.length;
  const L = Math.min(n, job.lowBits);
  const H = n - L;
  const blockCount = 2 ** H;
  const B = 2 ** L;
  const C = Math.min(job.tile, B);
  const tileCount = B / C;
  const amp0 = 1 / Math.sqrt(2 ** n);
  const tableSize = job.values.length;
  const phr = new Float64Array(tableSize);
  const phi = new Float64Array(tableSize);
  let partial = 0;
  const [b0, b1] = share(blockCount, thread, threads);
  const [t0, t1] = share(tileCount, thread, threads);
  for (let l = 0; l < p; l++) {
    const gamma = gammas[l]!;
    const c = Math.cos(betas[l]!);
    const s = Math.sin(betas[l]!);
    const last = l === p - 1;
    for (let k = 0; k < tableSize; k++) {
      const t = -gamma * job.values[k]!;
      phr[k] = Math.cos(t);
      phi[k] = Math.sin(t);
    }
    for (let b = b0; b < b1; b++) {
      const o = b * B;
      if (job.index) phaseTable(job.re, job.im, job.index, phr, phi, o, o + B, l === 0, amp0);
      else phaseRaw(job.re, job.im, job.raw!, gamma, o, o + B, l === 0, amp0);
      mixLow(job.re, job.im, o, L, c, s);
      if (last && H === 0 && job.expectation) partial += expectRange(job, o, o + B);
    }
    barrier();
    if (H > 0) {
      for (let t = t0; t < t1; t++) {
        const off = t * C;
        mixHigh(job.re, job.im, off, C, L, n, c, s);
        if (last && job.expectation) partial += expectTile(job, off, C, B);
      }
      barrier();
    }
  }
  return partial;
}

function phaseTable(
  re: Float64Array,
  im: Float64Array,
  index: Uint16Array,
  phr: Float64Array,
  phi: Float64Array,
  from: number,
  to: number,
  init: boolean,
  amp0: number,
): void {
  if (init) {
    for (let z = from; z < to; z++) {
      const k = index[z]!;
      re[z] = amp0 * phr[k]!;
      im[z] = amp0 * phi[k]!;
    }
    return;
  }
  for (let z = from; z < to; z++) {
    const k = index[z]!;
    const pr = phr[k]!;
    const pi = phi[k]!;
    const xr = re[z]!;
    const xi = im[z]!;
    re[z] = xr * pr - xi * pi;
    im[z] = xr * pi + xi * pr;
  }
}

function phaseRaw(
  re: Float64Array,
  im: Float64Array,
  raw: Float64Array,
  gamma: number,
  from: number,
  to: number,
  init: boolean,
  amp0: number,
): void {
  for (let z = from; z < to; z++) {
    const t = -gamma * raw[z]!;
    const pr = Math.cos(t);
    const pi = Math.sin(t);
    if (init) {
      re[z] = amp0 * pr;
      im[z] = amp0 * pi;
    } else {
      const xr = re[z]!;
      const xi = im[z]!;
      re[z] = xr * pr - xi * pi;
      im[z] = xr * pi + xi * pr;
    }
  }
}

/**
 * RX(2β) = [[c, -is], [-is, c]] on the pair (i, j): x' = c·x - i·s·y, y' = c·y - i·s·x.
 */
function rx2(re: Float64Array, im: Float64Array, i: number, j: number, c: number, s: number): void {
  const xr = re[i]!;
  const xi = im[i]!;
  const yr = re[j]!;
  const yi = im[j]!;
  re[i] = c * xr + s * yi;
  im[i] = c * xi - s * yr;
  re[j] = c * yr + s * xi;
  im[j] = c * yi - s * xr;
}

/** RX(2β) ⊗ RX(2β) on the four amplitudes i, i+s1, i+s2, i+s1+s2 (qubits log2 s1 and log2 s2). */
function rx4(re: Float64Array, im: Float64Array, i0: number, s1: number, s2: number, c: number, s: number): void {
  const i1 = i0 + s1;
  const i2 = i0 + s2;
  const i3 = i2 + s1;
  const a0r = re[i0]!;
  const a0i = im[i0]!;
  const a1r = re[i1]!;
  const a1i = im[i1]!;
  const a2r = re[i2]!;
  const a2i = im[i2]!;
  const a3r = re[i3]!;
  const a3i = im[i3]!;
  const b0r = c * a0r + s * a1i;
  const b0i = c * a0i - s * a1r;
  const b1r = c * a1r + s * a0i;
  const b1i = c * a1i - s * a0r;
  const b2r = c * a2r + s * a3i;
  const b2i = c * a2i - s * a3r;
  const b3r = c * a3r + s * a2i;
  const b3i = c * a3i - s * a2r;
  re[i0] = c * b0r + s * b2i;
  im[i0] = c * b0i - s * b2r;
  re[i2] = c * b2r + s * b0i;
  im[i2] = c * b2i - s * b0r;
  re[i1] = c * b1r + s * b3i;
  im[i1] = c * b1i - s * b3r;
  re[i3] = c * b3r + s * b1i;
  im[i3] = c * b3i - s * b1r;
}

/** RX(2β) on qubits 0..L-1 of the block starting at o (length 2^L). */
function mixLow(re: Float64Array, im: Float64Array, o: number, L: number, c: number, s: number): void {
  const end = o + 2 ** L;
  let q = 0;
  for (; q + 1 < L; q += 2) {
    const s1 = 1 << q;
    const s2 = s1 << 1;
    const step = s2 << 1;
    if (s1 === 1) {
      for (let g = o; g < end; g += 4) rx4(re, im, g, 1, 2, c, s);
    } else {
      for (let g = o; g < end; g += step) {
        const stop = g + s1;
        for (let i = g; i < stop; i++) rx4(re, im, i, s1, s2, c, s);
      }
    }
  }
  if (q < L) {
    const s1 = 1 << q;
    for (let g = o; g < end; g += s1 << 1) {
      const stop = g + s1;
      for (let i = g; i < stop; i++) rx2(re, im, i, i + s1, c, s);
    }
  }
}

/** RX(2β) on qubits L..n-1 for the tile of C consecutive low offsets starting at off. */
function mixHigh(
  re: Float64Array,
  im: Float64Array,
  off: number,
  C: number,
  L: number,
  n: number,
  c: number,
  s: number,
): void {
  const N = 2 ** n;
  const B = 2 ** L;
  let q = L;
  for (; q + 1 < n; q += 2) {
    const s1 = 2 ** q;
    const s2 = s1 * 2;
    for (let g = 0; g < N; g += s2 * 2) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + off;
        for (let k = 0; k < C; k++) rx4(re, im, base + k, s1, s2, c, s);
      }
    }
  }
  if (q < n) {
    const s1 = 2 ** q;
    for (let g = 0; g < N; g += s1 * 2) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + off;
        for (let k = 0; k < C; k++) rx2(re, im, base + k, base + k + s1, c, s);
      }
    }
  }
}

function expectRange(job: QaoaJob, from: number, to: number): number {
  const { re, im, index, values, raw } = job;
  let sum = 0;
  if (index) {
    for (let z = from; z < to; z++) sum += (re[z]! * re[z]! + im[z]! * im[z]!) * values[index[z]!]!;
  } else {
    for (let z = from; z < to; z++) sum += (re[z]! * re[z]! + im[z]! * im[z]!) * raw![z]!;
  }
  return sum;
}

function expectTile(job: QaoaJob, off: number, C: number, B: number): number {
  const N = job.re.length;
  let sum = 0;
  for (let h = 0; h < N; h += B) sum += expectRange(job, h + off, h + off + C);
  return sum;
}
