import { readFileSync } from 'node:fs';

/** WebAssembly memory grows in pages of 64 KiB, to at most 65,536 of them (4 GiB). */
export const WASM_PAGE = 65_536;
export const WASM_MAX_PAGES = 65_536;

/** The WebAssembly pages that hold `bytes`. */
export function wasmPages(bytes: number): number {
  return Math.ceil(bytes / WASM_PAGE);
}

/** What column-scan.wasm exports (wasm/column-scan.as.ts says what each argument is). */
export interface ColumnScanExports {
  scanPage(
    page: number, stride: number, rows: number, invNorm: number, columns: number, weights: number, groups: number,
    bias: number, floor: number, acc: number, outRows: number, outScores: number,
  ): number;
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * The compiled scan kernel (wasm/column-scan.wasm, SIMD and relaxed SIMD), or null where this
 * runtime cannot compile it: the index then scans in JS, with the same results. Compiled once
 * per thread, on first use.
 */
export function columnScanModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(readFileSync(new URL('./wasm/column-scan.wasm', import.meta.url)));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}
