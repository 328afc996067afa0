import { readFileSync } from 'node:fs';
import { IdleRelease, SIMULATOR_IDLE_RELEASE_MS } from './idle-release.ts';

/**
 * The QAOA kernel's passes compiled to WebAssembly SIMD (wasm/qaoa-passes.as.ts, built into
 * wasm/qaoa-passes.wasm and wasm/qaoa-passes-fma.wasm). The exact build computes exactly what the
 * JavaScript passes in qaoa-kernel.ts do — the same operations in the same order, so results agree
 * bit for bit — two amplitudes per instruction and without bounds checks: about 2.7× the
 * JavaScript mixer's speed. The fused build does the same with multiply-adds (see PassesVariant). They work on
 * arrays inside one shared WebAssembly.Memory (a WasmArena, wasm-arena.ts), addressed by byte.
 */
export interface WasmPasses {
  mixLow(re: number, im: number, o: number, from: number, L: number, t: number): void;
  mixHigh(re: number, im: number, off: number, C: number, L: number, n: number, t: number): void;
  phaseTable(re: number, im: number, index: number, phr: number, phi: number, from: number, to: number, xmask: number, init: number, amp0: number): void;
  phaseMix01(re: number, im: number, index: number, phr: number, phi: number, from: number, to: number, xmask: number, init: number, amp0: number, t: number): void;
  expectIndexed(re: number, im: number, index: number, values: number, from: number, to: number, xmask: number): number;
}

/** Largest memory the module accepts (its declared maximum): 65 536 pages of 64 KiB, 4 GiB. */
export const WASM_MAX_BYTES = 65536 * 65536;
export const WASM_PAGE_BYTES = 65536;

/**
 * The two builds of the passes (wasm/asconfig.json's targets): 'exact' rounds every product and
 * sum as the JavaScript passes do, bit for bit; 'fma' uses relaxed-SIMD multiply-adds, which the
 * engine fuses (one rounding) where the processor has FMA: the same ⟨C⟩ to ~1e-14, not the same bits.
 */
export type PassesVariant = 'exact' | 'fma';

const FILES: Record<PassesVariant, string> = { exact: './wasm/qaoa-passes.wasm', fma: './wasm/qaoa-passes-fma.wasm' };
const compiled = new Map<PassesVariant, WebAssembly.Module | null>();

/**
 * The compiled module of a variant, or null where this runtime cannot run it (no SIMD or no
 * shared memory, or for 'fma' no relaxed SIMD: the caller then takes the exact build or the
 * JavaScript passes). Compiled once per thread and variant, on first use (~1 ms).
 */
export function wasmPassesModule(variant: PassesVariant = 'exact'): WebAssembly.Module | null {
  let module = compiled.get(variant);
  if (module === undefined) {
    try {
      module = new WebAssembly.Module(readFileSync(new URL(FILES[variant], import.meta.url)));
    } catch {
      module = null;
    }
    compiled.set(variant, module);
  }
  return module;
}

/**
 * Whether SVC_SIM_FMA asks for the exact passes ('off', '0', 'false' or 'no'; anything else,
 * or unset, leaves the fused ones on where the runtime has them).
 */
export function fmaDisabledByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env['SVC_SIM_FMA']?.trim().toLowerCase();
  return v === 'off' || v === '0' || v === 'false' || v === 'no';
}

/**
 * The variant a job runs: 'exact' when asked for, or when SVC_SIM_FMA turns fusing off, or
 * where the runtime cannot compile the fused build; else 'fma' (the default).
 */
export function chooseVariant(wanted: 'default' | PassesVariant, env: NodeJS.ProcessEnv = process.env): PassesVariant {
  if (wanted === 'exact') return 'exact';
  if (wanted === 'default' && fmaDisabledByEnv(env)) return 'exact';
  return wasmPassesModule('fma') !== null ? 'fma' : 'exact';
}

let instanceFor: { id: number; variant: PassesVariant; passes: WasmPasses } | null = null;
/** An instance keeps its arena's memory alive: dropped after 20 s unused, as arenas are. */
const idle = new IdleRelease(SIMULATOR_IDLE_RELEASE_MS, forgetWasmPasses);

/** Drops this thread's instance (and with it its hold on an arena's memory). */
export function forgetWasmPasses(): void {
  instanceFor = null;
  idle.cancel();
}

/**
 * This thread's instance of a variant over the arena with this id (a team's helper threads receive
 * the arena's memory with every job; the id says whether it is the one they already have an
 * instance for).
 */
export function wasmPasses(id: number, memory: WebAssembly.Memory, variant: PassesVariant = 'exact'): WasmPasses {
  idle.touch();
  if (instanceFor?.id === id && instanceFor.variant === variant) return instanceFor.passes;
  const module = wasmPassesModule(variant);
  if (!module) throw new Error(`the WebAssembly QAOA passes (${variant}) cannot run in this runtime`);
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const passes = instance.exports as unknown as WasmPasses;
  instanceFor = { id, variant, passes };
  return passes;
}
