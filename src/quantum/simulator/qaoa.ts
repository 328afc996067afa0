import { applyDiagonalPhase, applyMixerX } from './gates.ts';
import { expectationDiagonal } from './measure.ts';
import { assertFits } from './memory-guard.ts';
import { defaultThreads, getQaoaTeam, PARALLEL_MIN_QUBITS } from './parallel.ts';
import { isPreparedDiagonal, prepareDiagonal } from './prepared-diagonal.ts';
import type { PreparedDiagonal } from './prepared-diagonal.ts';
import { defaultTile, finishState, partialSlots, runQaoaShare, soloSync, sumPartials } from './qaoa-kernel.ts';
import type { QaoaJob } from './qaoa-kernel.ts';
import { IdleRelease, SIMULATOR_IDLE_RELEASE_MS } from './idle-release.ts';
import { StateVector } from './state-vector.ts';
import { arenaJob, releaseArena } from './wasm-arena.ts';
import { chooseVariant } from './wasm-passes.ts';
import { defaultLowBits } from './low-bits.ts';

export interface QaoaOptions {
  /**
   * Threads to use (the caller plus helper workers). Default: defaultThreads() from
   * PARALLEL_MIN_QUBITS qubits up, else 1. Results are bit-for-bit the same for any count.
   */
  threads?: number;
  /** Block size exponent for the in-cache low-qubit pass (tuning; default defaultLowBits(): from the L2 size, 14 where unknown). */
  lowBits?: number;
  /** Consecutive amplitudes per tile in the high-qubit pass (tuning; default defaultTile(n, lowBits)). */
  tile?: number;
  /**
   * Tuning: false runs the phase and the mixer on qubits 0, 1 as two WebAssembly sweeps, as before
   * issue 30 (default true: one sweep; the same results either way).
   */
  fusePhase?: boolean;
  /** Memory budget override in bytes (defaults to the machine budget). */
  budgetBytes?: number;
  /**
   * 'wasm' (default where the runtime supports it): the passes in WebAssembly SIMD on a state in
   * this thread's arena (wasm-arena.ts), fused multiply-adds where the engine has relaxed SIMD
   * (the same ⟨C⟩ as the JavaScript passes to ~1e-14, not bit for bit) unless SVC_SIM_FMA=off;
   * 'wasm-exact': the WebAssembly passes without fusing, bit for bit the JavaScript passes;
   * 'wasm-fma': fused even where SVC_SIM_FMA=off (exact where the engine cannot);
   * 'js': the JavaScript passes.
   */
  kernel?: 'wasm' | 'wasm-exact' | 'wasm-fma' | 'js';
}

function checkAngles(gammas: readonly number[], betas: readonly number[]): void {
  if (gammas.length !== betas.length) {
    throw new RangeError(`QAOA needs as many gammas as betas (${gammas.length} vs ${betas.length})`);
  }
  for (const a of [...gammas, ...betas]) if (!Number.isFinite(a)) throw new RangeError('QAOA angles must be finite');
}

function toPrepared(n: number, diag: Float64Array | PreparedDiagonal, shared = false): PreparedDiagonal {
  const prepared = isPreparedDiagonal(diag) ? diag : prepareDiagonal(diag, { shared });
  if (prepared.qubits !== n) throw new RangeError(`diagonal is for ${prepared.qubits} qubits, not ${n}`);
  return prepared;
}

function resolveThreads(n: number, options: QaoaOptions): number {
  if (options.threads !== undefined) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${options.threads}`);
    }
    return options.threads;
  }
  return n >= PARALLEL_MIN_QUBITS ? defaultThreads() : 1;
}

const sharedCopies = new WeakMap<PreparedDiagonal, PreparedDiagonal>();

/** The diagonal with its big array on shared memory, so helper threads read it in place. */
function sharedDiagonal(d: PreparedDiagonal): PreparedDiagonal {
  const big = d.index ?? d.raw!;
  if (big.buffer instanceof SharedArrayBuffer) return d;
  const cached = sharedCopies.get(d);
  if (cached) return cached;
  let copy: PreparedDiagonal;
  if (d.index) {
    const index = new Uint16Array(new SharedArrayBuffer(d.index.byteLength));
    index.set(d.index);
    copy = { ...d, index };
  } else {
    const raw = new Float64Array(new SharedArrayBuffer(d.raw!.byteLength));
    raw.set(d.raw!);
    copy = { ...d, raw };
  }
  sharedCopies.set(d, copy);
  return copy;
}

/**
 * Runs the schedule: in this thread's WebAssembly arena when the passes can serve the job (the
 * result, for qaoaState, is then copied into `into`), else on `into` or the scratch state with
 * the JavaScript passes; across the thread team when threads > 1 and workers are available.
 */
function execute(
  n: number,
  d: PreparedDiagonal,
  gammas: readonly number[],
  betas: readonly number[],
  options: QaoaOptions,
  threads: number,
  into: StateVector | null,
): number {
  const expectation = into === null;
  const kernel = options.kernel ?? 'wasm';
  const variant = chooseVariant(kernel === 'wasm-exact' ? 'exact' : kernel === 'wasm-fma' ? 'fma' : 'default');
  const wasm = kernel === 'js' ? null : arenaJob(n, d, options.budgetBytes, into ? 1 : 0, variant);
  const state = wasm ? null : (into ?? scratchState(n, threads > 1, options.budgetBytes));
  const team = threads > 1 && (wasm !== null || state!.shared) ? getQaoaTeam(threads) : null;
  const diag = wasm ? { ...d, index: wasm.index, values: wasm.values } : team ? sharedDiagonal(d) : d;
  const lowBits = options.lowBits ?? defaultLowBits();
  const tile = options.tile ?? defaultTile(n, lowBits);
  if (!Number.isInteger(lowBits) || lowBits < 1 || !Number.isInteger(Math.log2(tile))) {
    throw new RangeError(`lowBits must be a positive integer and tile a power of two (got ${lowBits}, ${tile})`);
  }
  const slots = partialSlots(n, lowBits, tile);
  const job: QaoaJob = {
    n,
    re: wasm ? wasm.re : state!.re,
    im: wasm ? wasm.im : state!.im,
    index: diag.index,
    raw: diag.raw,
    values: diag.values,
    gammas: Float64Array.from(gammas),
    betas: Float64Array.from(betas),
    expectation,
    lowBits,
    tile,
    partials: team ? new Float64Array(new SharedArrayBuffer(slots * 8)) : new Float64Array(slots),
    table: wasm ? wasm.table : tableScratch(2 * diag.values.length, team !== null),
  };
  if (wasm) job.wasm = { ...wasm.layout, fusePhase: options.fusePhase !== false };
  const value = team ? team.run(job) : (runQaoaShare(job, soloSync()), expectation ? sumPartials(job) : 0);
  if (!expectation) {
    finishState(job);
    if (wasm) {
      into!.re.set(wasm.re);
      into!.im.set(wasm.im);
    }
  }
  return value;
}

/** Mean of the diagonal: ⟨+|C|+⟩, the p = 0 case. */
function uniformMean(d: PreparedDiagonal): number {
  let sum = 0;
  const size = 2 ** d.qubits;
  if (d.index) for (let z = 0; z < size; z++) sum += d.values[d.index[z]!]!;
  else for (let z = 0; z < size; z++) sum += d.raw![z]!;
  return sum / size;
}

/**
 * The QAOA state e^{-iβ_p B} e^{-iγ_p C} … e^{-iβ_1 B} e^{-iγ_1 C} |+>^n with B = Σ X_q and
 * C = diag (the cost of each basis state). Pass a PreparedDiagonal (prepareDiagonal) when the
 * same cost is evaluated many times: a Float64Array is prepared again on every call.
 */
export function qaoaState(
  n: number,
  diag: Float64Array | PreparedDiagonal,
  gammas: readonly number[],
  betas: readonly number[],
  options: QaoaOptions = {},
): StateVector {
  checkAngles(gammas, betas);
  const threads = resolveThreads(n, options);
  const shared = threads > 1;
  const d = toPrepared(n, diag, shared);
  if (gammas.length === 0) return StateVector.uniform(n, { budgetBytes: options.budgetBytes, shared });
  const state = StateVector.allocate(n, { budgetBytes: options.budgetBytes, shared });
  execute(n, d, gammas, betas, options, threads, state);
  return state;
}

/**
 * ⟨ψ(γ, β)|C|ψ(γ, β)⟩ for the QAOA state above: the function a QAOA optimiser evaluates.
 * Reuses one scratch state per thread between calls, so repeated evaluation allocates nothing.
 */
export function qaoaExpectation(
  n: number,
  diag: Float64Array | PreparedDiagonal,
  gammas: readonly number[],
  betas: readonly number[],
  options: QaoaOptions = {},
): number {
  checkAngles(gammas, betas);
  const threads = resolveThreads(n, options);
  const d = toPrepared(n, diag, threads > 1);
  if (gammas.length === 0) return uniformMean(d);
  return execute(n, d, gammas, betas, options, threads, null);
}

/**
 * The same evaluation as plain gate-level passes (H on every qubit, one diagonal-phase pass and
 * n RX passes per layer, then the expectation): the reference the fast kernel is checked
 * against, and the benchmark's "layered, unfused" column.
 */
export function qaoaExpectationReference(
  n: number,
  diag: Float64Array,
  gammas: readonly number[],
  betas: readonly number[],
): number {
  checkAngles(gammas, betas);
  const s = StateVector.uniform(n);
  for (let l = 0; l < gammas.length; l++) {
    applyDiagonalPhase(s, diag, gammas[l]!);
    applyMixerX(s, betas[l]!);
  }
  return expectationDiagonal(s, diag);
}

// One phase-table scratch per thread, grown as needed (a team's on shared memory); at most
// 2 × 65 536 values, 1 MiB, so it is simply kept.
let table: Float64Array = new Float64Array(0);

function tableScratch(length: number, shared: boolean): Float64Array {
  if (table.length < length || (shared && !(table.buffer instanceof SharedArrayBuffer))) {
    const size = Math.max(length, table.length);
    table = shared ? new Float64Array(new SharedArrayBuffer(size * 8)) : new Float64Array(size);
  }
  return table;
}

// One scratch state per thread (per module instance), released after a quiet spell so a daemon
// does not keep a large vector alive after a solve.
let scratch: StateVector | null = null;
// the timer drops only the scratch state: the arena keeps its own clock (wasm-arena.ts)
const scratchIdle = new IdleRelease(SIMULATOR_IDLE_RELEASE_MS, () => {
  scratch = null;
  scratchIdle.cancel();
});

export function scratchState(n: number, shared: boolean, budgetBytes?: number): StateVector {
  // a shared scratch serves single-threaded calls too, so alternating thread counts do not reallocate
  if (!scratch || scratch.qubits !== n || (shared && !scratch.shared)) {
    scratch = null;
    assertFits(n, 1, budgetBytes);
    scratch = StateVector.allocate(n, { shared, budgetBytes });
  }
  scratchIdle.touch();
  return scratch;
}

/** Drops the cached scratch state and WebAssembly arena now (each is dropped anyway after 20 s unused). */
export function releaseScratch(): void {
  scratch = null;
  scratchIdle.cancel();
  releaseArena();
}
