import { IdleRelease, SIMULATOR_IDLE_RELEASE_MS } from './idle-release.ts';
import { assertFits, SimulatorCapacityError } from './memory-guard.ts';
import type { PreparedDiagonal } from './prepared-diagonal.ts';
import type { WasmJobLayout } from './qaoa-kernel.ts';
import { forgetWasmPasses, WASM_MAX_BYTES, WASM_PAGE_BYTES, wasmPassesModule } from './wasm-passes.ts';
import type { PassesVariant } from './wasm-passes.ts';

/**
 * The memory the WebAssembly QAOA passes work in: one shared WebAssembly.Memory per thread that
 * evaluates QAOA (and its helper team), laid out as [re][im][index][phase table][values]. The
 * state lives here instead of in a StateVector so the passes can address it; the prepared
 * diagonal's index is copied in once per diagonal (2 bytes per amplitude) and kept while the same
 * diagonal is evaluated again, as an optimiser does hundreds of times.
 */
export interface WasmArenaJob {
  layout: WasmJobLayout;
  re: Float64Array;
  im: Float64Array;
  /** Phase-table scratch (2 × values), at layout.table. */
  table: Float64Array;
  /** The diagonal's index and values as copied in (views: a team's threads share them, no copies). */
  index: Uint16Array;
  values: Float64Array;
}

const ALIGN = 64;
const align = (bytes: number): number => Math.ceil(bytes / ALIGN) * ALIGN;

interface Arena {
  id: number;
  memory: WebAssembly.Memory;
  bytes: number;
  /** The index array whose copy sits at `indexAt`, and where. */
  indexOf: WeakRef<Uint16Array> | null;
  indexAt: number;
}

let arena: Arena | null = null;
let nextId = 1;
const idle = new IdleRelease(SIMULATOR_IDLE_RELEASE_MS, releaseArena);

/** Byte offsets of an n-qubit job with `values` distinct costs in an arena, and its end. */
function layoutOf(n: number, values: number): { re: number; im: number; index: number; table: number; values: number; end: number } {
  const N = 2 ** n;
  const im = align(N * 8);
  const index = im + align(N * 8);
  const table = index + align(N * 2);
  const valuesAt = table + align(2 * values * 8);
  return { re: 0, im, index, table, values: valuesAt, end: valuesAt + align(values * 8) };
}

/** Bytes an n-qubit job on this (indexed) diagonal needs in an arena. */
export function arenaBytes(n: number, d: PreparedDiagonal): number {
  return layoutOf(n, d.values.length).end;
}

/**
 * Lays out an n-qubit job for diagonal `d` in this thread's arena (made or enlarged as needed,
 * through the memory guard), or returns null where the WebAssembly passes cannot serve it: the
 * runtime lacks them, the diagonal is raw (its phase needs per-amplitude trigonometry, which the
 * JavaScript passes do), or the job would not fit the 4 GiB a module can address.
 * `extraCopies` counts further states the caller will hold at the same time (for the guard);
 * `variant` is the build of the passes the job will run (chooseVariant).
 */
export function arenaJob(n: number, d: PreparedDiagonal, budgetBytes: number | undefined, extraCopies = 0, variant: PassesVariant = 'exact'): WasmArenaJob | null {
  if (!d.index || wasmPassesModule(variant) === null) return null;
  const { re, im, index, table, values, end: bytes } = layoutOf(n, d.values.length);
  if (bytes > WASM_MAX_BYTES) return null;
  const N = 2 ** n;
  // where the guard refuses the arena's extra bytes (the index copy), the JavaScript passes run
  // in a plain state instead, under their own check
  if (!fits(n, extraCopies + (!arena || arena.bytes < bytes ? 1 : 0), budgetBytes, bytes - 16 * N)) return null;
  if (!arena || arena.bytes < bytes) {
    arena = null;
    const pages = Math.ceil(bytes / WASM_PAGE_BYTES);
    arena = { id: nextId++, memory: new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }), bytes: pages * WASM_PAGE_BYTES, indexOf: null, indexAt: -1 };
  }
  idle.touch();
  const buffer = arena.memory.buffer;
  if (arena.indexOf?.deref() !== d.index || arena.indexAt !== index) {
    new Uint16Array(buffer, index, N).set(d.index);
    arena.indexOf = new WeakRef(d.index);
    arena.indexAt = index;
  }
  const valuesView = new Float64Array(buffer, values, d.values.length);
  valuesView.set(d.values);
  return {
    index: new Uint16Array(buffer, index, N),
    values: valuesView,
    layout: { id: arena.id, memory: arena.memory, re, im, index, table, values, variant },
    re: new Float64Array(buffer, re, N),
    im: new Float64Array(buffer, im, N),
    table: new Float64Array(buffer, table, 2 * d.values.length),
  };
}

function fits(n: number, copies: number, budgetBytes: number | undefined, extraBytes: number): boolean {
  try {
    assertFits(n, copies, budgetBytes, extraBytes);
    return true;
  } catch (err) {
    if (err instanceof SimulatorCapacityError) return false;
    throw err;
  }
}

/** Drops this thread's arena now (it is dropped anyway after 20 s unused). */
export function releaseArena(): void {
  arena = null;
  forgetWasmPasses();
  idle.cancel();
}
