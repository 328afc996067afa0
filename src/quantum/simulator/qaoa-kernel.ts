// Long because it is a hand-unrolled kernel: the QAOA layer schedule and its passes (the radix-4
// RX butterflies written out amplitude by amplitude, phase loops specialised per case), the
// JavaScript twins of wasm-passes.ts's SIMD passes that must give the same results bit for bit.
import { cosSinInto } from './fast-trig.ts';
import { wasmPasses } from './wasm-passes.ts';
import type { PassesVariant, WasmPasses } from './wasm-passes.ts';

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
 * Blocks and tiles are independent. Threads claim chunks of them from a shared counter (so a
 * thread slowed by other load on the machine simply takes fewer), and the passes are separated
 * by a barrier: the same code runs single-threaded and in a thread team (parallel.ts). The
 * expectation is accumulated per chunk and summed in chunk order, so the result is bit-for-bit
 * the same whatever the thread count or scheduling.
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
  /** Per-chunk expectation partials, at least partialSlots(n, lowBits, tile) long (shared memory for a team). */
  partials: Float64Array;
  /**
   * Scratch for the layer's phase table e^{-iγ·values[k]} (times the pending global scale): at
   * least 2 × values.length (re then im; shared memory for a team). The threads fill it together,
   * chunk by chunk, before each layer's first pass.
   */
  table: Float64Array;
  /**
   * Where the arrays sit when they are views into a WasmArena's memory (wasm-arena.ts): byte
   * offsets of re, im, index (-1 without one), the phase table and values. The passes then run
   * as WebAssembly SIMD (wasm-passes.ts): the exact build gives the same results bit for bit, the
   * fused one the same to ~1e-14.
   */
  wasm?: WasmJobLayout;
  /** Set by runQaoaShare: true state = finalScale · X^{⊗n if flipped} · stored state. */
  finalScale?: [number, number];
  flipped?: boolean;
}

export interface WasmJobLayout {
  /** Identifies the arena (its memory), so each thread instantiates the passes once per arena. */
  id: number;
  memory: WebAssembly.Memory;
  re: number;
  im: number;
  index: number;
  table: number;
  values: number;
  /** Which build of the passes every thread of the job runs (the same one, so results do not depend on threads). */
  variant: PassesVariant;
  /** Phase and qubits 0, 1 in one sweep (default; false: two, as before issue 30). */
  fusePhase?: boolean;
}

export const DEFAULT_LOW_BITS = 14;
/** cos and sin of the current phase (cosSinInto writes both; one per thread). */
const cs = new Float64Array(2);
/** Sub-block exponent of the low pass: 2^10 amplitudes of re + im are 16 KiB, half of L1d. */
const SUB_BITS = 10;
/**
 * Consecutive low offsets per high-pass tile: 512, so every strided segment the high pass walks is
 * one 4 KiB page of re and one of im. Measured with the WebAssembly passes (CPU time, one thread,
 * best of 5, on a busy machine): at n = 24, 377 ms against 477 ms for the 64-wide tiles of a
 * 2^16-amplitude target that suited the slower JavaScript passes, and 392 / 476 ms for 256 / 1024;
 * at n = 20 and 22 within 5% of the best width; at n = 26, 2.7 s. Wide segments matter because the
 * process gets no transparent huge pages: a narrow segment costs a TLB miss and a prefetcher
 * restart for a few cache lines, and once the passes stopped being compute-bound that dominated.
 */
const SEGMENT_AMPLITUDES = 512;

/**
 * Tile width (consecutive low offsets per tile) for n qubits and block exponent lowBits: one page
 * per segment (SEGMENT_AMPLITUDES), and at most 1/16 of a block so a pass has tiles to share
 * between threads.
 */
export function defaultTile(n: number, lowBits: number): number {
  const L = Math.min(n, lowBits);
  return Math.max(1, Math.min(2 ** L / 16, SEGMENT_AMPLITUDES));
}

/** How threads coordinate: `next` claims the next chunk index of the current pass; `barrier` waits for all threads and resets the claim counter. */
export interface ShareSync {
  next(): number;
  barrier(): void;
}

/** Single-thread coordination: chunks in order, no waiting. */
export function soloSync(): ShareSync {
  let counter = 0;
  return {
    next: () => counter++,
    barrier: () => {
      counter = 0;
    },
  };
}

/** Phase-table entries per claimed chunk. */
const TABLE_CHUNK = 2048;

/** Amplitudes per claimed chunk: large enough that claiming costs nothing, small enough to balance. */
const CHUNK_AMPLITUDES = 1 << 14;

/** Chunk partial sums a job needs (size job.partials to at least this). */
export function partialSlots(n: number, lowBits: number, tile: number): number {
  const L = Math.min(n, lowBits);
  const H = n - L;
  if (H === 0) return 1;
  const C = Math.min(tile, 2 ** L);
  const tileCount = 2 ** L / C;
  return tileCount / tilesPerChunk(H, C, tileCount);
}

function tilesPerChunk(H: number, C: number, tileCount: number): number {
  return Math.min(tileCount, Math.max(1, CHUNK_AMPLITUDES / (2 ** H * C)));
}

/**
 * Runs this thread's part of the schedule, claiming chunks through `sync`. With
 * job.expectation, each chunk's Σ|amp|²·C(z) lands in job.partials[chunk]; the caller sums them
 * (sumPartials) after every thread has returned.
 */
export function runQaoaShare(job: QaoaJob, sync: ShareSync): void {
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
  if (job.table.length < 2 * tableSize) throw new RangeError(`phase table scratch holds ${job.table.length} values, the job needs ${2 * tableSize}`);
  const phr = job.table.subarray(0, tableSize);
  const phi = job.table.subarray(tableSize, 2 * tableSize);
  const tableChunks = Math.ceil(tableSize / TABLE_CHUNK);
  const blocksPer = Math.max(1, Math.min(blockCount, CHUNK_AMPLITUDES / B));
  const blockChunks = blockCount / blocksPer;
  const tilesPer = tilesPerChunk(H, C, tileCount);
  const tileChunks = tileCount / tilesPer;
  const partials = job.partials;
  const lay = job.wasm;
  const w = lay ? wasmPasses(lay.id, lay.memory, lay.variant) : null;
  // the SIMD high pass takes two neighbouring offsets at a time
  const wHigh = w && C % 2 === 0 ? w : null;
  const phrAt = lay ? lay.table : 0;
  const phiAt = lay ? lay.table + tableSize * 8 : 0;
  // true state = (gr + i·gi) · X^{⊗n·flip} · stored state (see rx2)
  let gr = 1;
  let gi = 0;
  let flip = 0;
  for (let l = 0; l < p; l++) {
    const gamma = gammas[l]!;
    let beta = betas[l]!;
    let sigma = 0;
    if (Math.abs(Math.sin(beta)) > Math.abs(Math.cos(beta))) {
      sigma = Math.sin(beta) > 0 ? 1 : -1;
      beta -= (sigma * Math.PI) / 2;
    }
    const c = Math.cos(beta);
    const t = Math.tan(beta);
    const last = l === p - 1;
    // the phase table, split between the threads (a route's diagonal has ~49 000 distinct costs
    // at 16 qubits: computed whole by every thread, it was ~40% of a team evaluation)
    if (tableSize > 0) {
      for (let chunk = sync.next(); chunk < tableChunks; chunk = sync.next()) {
        const end = Math.min(tableSize, (chunk + 1) * TABLE_CHUNK);
        for (let k = chunk * TABLE_CHUNK; k < end; k++) {
          cosSinInto(-gamma * job.values[k]!, cs, 0);
          const cr = cs[0]!;
          const ci = cs[1]!;
          phr[k] = cr * gr - ci * gi;
          phi[k] = cr * gi + ci * gr;
        }
      }
      sync.barrier();
    }
    const xmask = flip * (2 ** n - 1);
    if (sigma !== 0) flip ^= 1;
    const xmaskAfter = flip * (2 ** n - 1);
    for (let chunk = sync.next(); chunk < blockChunks; chunk = sync.next()) {
      let sum = 0;
      for (let b = chunk * blocksPer; b < (chunk + 1) * blocksPer; b++) {
        const o = b * B;
        // L1-sized sub-blocks first: phase and the lowest SUB_BITS qubits while the data is in L1
        const S = Math.min(L, SUB_BITS);
        for (let so = o; so < o + B; so += 1 << S) {
          if (w && lay!.index >= 0 && S >= 2 && lay!.fusePhase !== false) {
            // phase and qubits 0, 1 in one sweep: each amplitude loaded and stored once less
            w.phaseMix01(lay!.re, lay!.im, lay!.index, phrAt, phiAt, so, so + (1 << S), xmask, l === 0 ? 1 : 0, amp0, t);
            w.mixLow(lay!.re, lay!.im, so, 2, S, t);
            continue;
          }
          if (w && lay!.index >= 0) w.phaseTable(lay!.re, lay!.im, lay!.index, phrAt, phiAt, so, so + (1 << S), xmask, l === 0 ? 1 : 0, amp0);
          else if (job.index) phaseTable(job.re, job.im, job.index, phr, phi, so, so + (1 << S), xmask, l === 0, amp0);
          else phaseRaw(job.re, job.im, job.raw!, gamma, gr, gi, so, so + (1 << S), xmask, l === 0, amp0);
          if (w) w.mixLow(lay!.re, lay!.im, so, 0, S, t);
          else mixLow(job.re, job.im, so, 0, S, t);
        }
        if (w) w.mixLow(lay!.re, lay!.im, o, S, L, t);
        else mixLow(job.re, job.im, o, S, L, t);
        if (last && H === 0 && job.expectation) sum += expectRange(job, o, o + B, xmaskAfter, w);
      }
      if (last && H === 0 && job.expectation) partials[chunk] = sum;
    }
    sync.barrier();
    if (H > 0) {
      for (let chunk = sync.next(); chunk < tileChunks; chunk = sync.next()) {
        let sum = 0;
        for (let tile = chunk * tilesPer; tile < (chunk + 1) * tilesPer; tile++) {
          const off = tile * C;
          if (wHigh) wHigh.mixHigh(lay!.re, lay!.im, off, C, L, n, t);
          else mixHigh(job.re, job.im, off, C, L, n, t);
          if (last && job.expectation) sum += expectTile(job, off, C, B, xmaskAfter, w);
        }
        if (last && job.expectation) partials[chunk] = sum;
      }
      sync.barrier();
    }
    // the scalar left out by this mixer: c^n · (-iσ)^n
    const m = c ** n;
    const unit = sigma === 0 ? [1, 0] : ([[1, 0], [0, -sigma], [-1, 0], [0, sigma]] as const)[n % 4]!;
    gr = m * unit[0]!;
    gi = m * unit[1]!;
  }
  job.finalScale = [gr, gi];
  job.flipped = flip === 1;
}

/** ⟨C⟩ of a finished expectation job: the chunk partials in order, times |final scale|². */
export function sumPartials(job: QaoaJob): number {
  const slots = partialSlots(job.n, job.lowBits, job.tile);
  let sum = 0;
  for (let k = 0; k < slots; k++) sum += job.partials[k]!;
  const [gr, gi] = job.finalScale ?? [1, 0];
  return sum * (gr * gr + gi * gi);
}

/**
 * Turns the stored state of a finished job into the true state: multiplies by the final scale
 * and undoes a pending X^{⊗n} (index complement). One pass, on the calling thread.
 */
export function finishState(job: QaoaJob): void {
  const { re, im } = job;
  const [gr, gi] = job.finalScale ?? [1, 0];
  const N = re.length;
  if (!job.flipped) {
    for (let z = 0; z < N; z++) {
      const xr = re[z]!;
      const xi = im[z]!;
      re[z] = xr * gr - xi * gi;
      im[z] = xr * gi + xi * gr;
    }
    return;
  }
  for (let z = 0; z < N >> 1; z++) {
    const w = N - 1 - z;
    const xr = re[z]!;
    const xi = im[z]!;
    const yr = re[w]!;
    const yi = im[w]!;
    re[z] = yr * gr - yi * gi;
    im[z] = yr * gi + yi * gr;
    re[w] = xr * gr - xi * gi;
    im[w] = xr * gi + xi * gr;
  }
}

function phaseTable(
  re: Float64Array,
  im: Float64Array,
  index: Uint16Array,
  phr: Float64Array,
  phi: Float64Array,
  from: number,
  to: number,
  xmask: number,
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
    const k = index[z ^ xmask]!;
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
  gr: number,
  gi: number,
  from: number,
  to: number,
  xmask: number,
  init: boolean,
  amp0: number,
): void {
  for (let z = from; z < to; z++) {
    cosSinInto(-gamma * raw[z ^ xmask]!, cs, 0);
    const cr = cs[0]!;
    const ci = cs[1]!;
    const pr = cr * gr - ci * gi;
    const pi = cr * gi + ci * gr;
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

/*
 * The mixer RX(2β) = [[c, -is], [-is, c]] (c = cos β, s = sin β) is applied up to a scalar, which
 * the schedule folds into the next layer's phase table (or the expectation), saving a third of
 * the multiplies: RX = c·P with P(x, y) = (x - i·t·y, y - i·t·x), t = tan β. To keep |t| ≤ 1,
 * a layer with |tan β| > 1 uses RX(2β) = -iσ·X·RX(2β - σπ/2) (σ = sign sin β): the X on every
 * qubit commutes with the rest of the mixer and is tracked as a flag instead of applied — the
 * stored state is then the true one with every index complemented, so later phase passes and the
 * expectation read the cost at z ^ (2^n - 1).
 */
function rx2(re: Float64Array, im: Float64Array, i: number, j: number, t: number): void {
  const xr = re[i]!;
  const xi = im[i]!;
  const yr = re[j]!;
  const yi = im[j]!;
  re[i] = xr + t * yi;
  im[i] = xi - t * yr;
  re[j] = yr + t * xi;
  im[j] = yi - t * xr;
}

/** The scaled RX on both qubits of the four amplitudes i, i+s1, i+s2, i+s1+s2. */
function rx4(re: Float64Array, im: Float64Array, i0: number, s1: number, s2: number, t: number): void {
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
  const b0r = a0r + t * a1i;
  const b0i = a0i - t * a1r;
  const b1r = a1r + t * a0i;
  const b1i = a1i - t * a0r;
  const b2r = a2r + t * a3i;
  const b2i = a2i - t * a3r;
  const b3r = a3r + t * a2i;
  const b3i = a3i - t * a2r;
  re[i0] = b0r + t * b2i;
  im[i0] = b0i - t * b2r;
  re[i2] = b2r + t * b0i;
  im[i2] = b2i - t * b0r;
  re[i1] = b1r + t * b3i;
  im[i1] = b1i - t * b3r;
  re[i3] = b3r + t * b1i;
  im[i3] = b3i - t * b1r;
}

/** RX(2β) on qubits from..L-1 of the block starting at o (length 2^L). */
function mixLow(re: Float64Array, im: Float64Array, o: number, from: number, L: number, t: number): void {
  const end = o + (1 << L);
  let q = from;
  for (; q + 1 < L; q += 2) {
    const s1 = 1 << q;
    const s2 = s1 << 1;
    const step = s2 << 1;
    if (s1 === 1) {
      for (let g = o; g < end; g += 4) rx4(re, im, g, 1, 2, t);
    } else {
      for (let g = o; g < end; g += step) {
        const stop = g + s1;
        for (let i = g; i < stop; i++) rx4(re, im, i, s1, s2, t);
      }
    }
  }
  if (q < L) {
    const s1 = 1 << q;
    for (let g = o; g < end; g += s1 << 1) {
      const stop = g + s1;
      for (let i = g; i < stop; i++) rx2(re, im, i, i + s1, t);
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
  t: number,
): void {
  const N = 1 << n;
  const B = 1 << L;
  let q = L;
  for (; q + 1 < n; q += 2) {
    const s1 = 1 << q;
    const s2 = s1 << 1;
    for (let g = 0; g < N; g += s2 << 1) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + off;
        for (let k = 0; k < C; k++) rx4(re, im, base + k, s1, s2, t);
      }
    }
  }
  if (q < n) {
    const s1 = 1 << q;
    for (let g = 0; g < N; g += s1 << 1) {
      const stop = g + s1;
      for (let h = g; h < stop; h += B) {
        const base = h + off;
        for (let k = 0; k < C; k++) rx2(re, im, base + k, base + k + s1, t);
      }
    }
  }
}

function expectRange(job: QaoaJob, from: number, to: number, xmask: number, w: WasmPasses | null): number {
  const lay = job.wasm;
  if (w && lay && lay.index >= 0) return w.expectIndexed(lay.re, lay.im, lay.index, lay.values, from, to, xmask);
  const { re, im, index, values, raw } = job;
  let sum = 0;
  if (index) {
    for (let z = from; z < to; z++) sum += (re[z]! * re[z]! + im[z]! * im[z]!) * values[index[z ^ xmask]!]!;
  } else {
    for (let z = from; z < to; z++) sum += (re[z]! * re[z]! + im[z]! * im[z]!) * raw![z ^ xmask]!;
  }
  return sum;
}

function expectTile(job: QaoaJob, off: number, C: number, B: number, xmask: number, w: WasmPasses | null): number {
  const N = job.re.length;
  let sum = 0;
  for (let h = 0; h < N; h += B) sum += expectRange(job, h + off, h + off + C, xmask, w);
  return sum;
}
