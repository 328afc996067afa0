import { readFileSync } from 'node:fs';
import { IdleRelease, SIMULATOR_IDLE_RELEASE_MS } from './idle-release.ts';

/**
 * The QAOA kernel's passes compiled to WebAssembly SIMD (wasm/qaoa-passes.as.ts, built into
 * wasm/qaoa-passes.wasm). They compute exactly what the JavaScript passes in qaoa-kernel.ts do —
 * the same operations in the same order, so results agree bit for bit — two amplitudes per
 * instruction and without bounds checks: about 2.7× the JavaScript mixer's speed. They work on
 * arrays inside one shared WebAssembly.Memory (a WasmArena, wasm-arena.ts), addressed by byte.
 */
export interface WasmPasses {
  mixLow(re: number, im: number, o: number, from: number, L: number, t: number): void;
  mixHigh(re: number, im: number, off: number, C: number, L: number, n: number, t: number): void;
  phaseTable(re: number, im: number, index: number, phr: number, phi: number, from: number, to: number, xmask: number, init: number, amp0: number): void;
  expectIndexed(re: number, im: number, index: number, values: number, from: number, to: number, xmask: number): number;
}

/** Largest memory the module accepts (its declared maximum): 65 536 pages of 64 KiB, 4 GiB. */
export const WASM_MAX_BYTES = 65536 * 65536;
export const WASM_PAGE_BYTES = 65536;

let compiled: WebAssembly.Module | null | undefined;

/**
 * The compiled module, or null where this runtime cannot run it (no SIMD or no shared memory:
 * the JavaScript passes then run instead). Compiled once per thread, on first use (~1 ms).
 */
export function wasmPassesModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(readFileSync(new URL('./wasm/qaoa-passes.wasm', import.meta.url)));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

let instanceFor: { id: number; passes: WasmPasses } | null = null;
/** An instance keeps its arena's memory alive: dropped after 20 s unused, as arenas are. */
const idle = new IdleRelease(SIMULATOR_IDLE_RELEASE_MS, forgetWasmPasses);

/** Drops this thread's instance (and with it its hold on an arena's memory). */
export function forgetWasmPasses(): void {
  instanceFor = null;
  idle.cancel();
}

/**
 * This thread's instance over the arena with this id (a team's helper threads receive the arena's
 * memory with every job; the id says whether it is the one they already have an instance for).
 */
export function wasmPasses(id: number, memory: WebAssembly.Memory): WasmPasses {
  idle.touch();
  if (instanceFor?.id === id) return instanceFor.passes;
  const module = wasmPassesModule();
  if (!module) throw new Error('the WebAssembly QAOA passes cannot run in this runtime');
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const passes = instance.exports as unknown as WasmPasses;
  instanceFor = { id, passes };
  return passes;
}
