/**
 * The WebAssembly SIMD passes (src/quantum/simulator/wasm) must compute exactly what the
 * JavaScript passes do: same operations, same order, so the states agree bit for bit. Checked
 * across qubit counts (the qubit-0 lane shuffle, odd leftover qubits, n < block size), block and
 * tile shapes (an odd tile falls back to the JavaScript high pass), flipped mixers (|tan β| > 1),
 * thread counts, and a diagonal whose index is swapped between calls. The fused build (relaxed-SIMD
 * multiply-adds, the default where the engine has it) must give the same ⟨C⟩ and amplitudes to
 * 1e-12, and the same bits for any thread count. The committed .wasm files must be what the
 * AssemblyScript source compiles to.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  maxCutDiagonal,
  prepareDiagonal,
  qaoaExpectation,
  qaoaState,
  shutdownQaoaTeam,
} from '../../../src/quantum/simulator/index.ts';
import { arenaBytes, arenaJob, releaseArena } from '../../../src/quantum/simulator/wasm-arena.ts';
import { chooseVariant, fmaDisabledByEnv, wasmPassesModule } from '../../../src/quantum/simulator/wasm-passes.ts';
import { randomEdges } from './helpers.ts';

after(() => shutdownQaoaTeam());

const gammas = [0.37, -0.81, 1.2, 0.05];
const betas = [0.5, 1.31, -2.2, 0.9];

function sameState(n: number, a: { re: Float64Array; im: Float64Array }, b: { re: Float64Array; im: Float64Array }, label: string): void {
  for (let z = 0; z < 2 ** n; z++) {
    if (a.re[z] !== b.re[z] || a.im[z] !== b.im[z]) assert.fail(`${label}: amplitude ${z} differs: ${a.re[z]}+${a.im[z]}i vs ${b.re[z]}+${b.im[z]}i`);
  }
}

test('this runtime runs the WebAssembly passes (SIMD and shared memory)', () => {
  assert.ok(wasmPassesModule() !== null);
});

test('WebAssembly and JavaScript passes agree bit for bit: expectation and state, n = 1..17, several block/tile shapes', () => {
  for (const n of [1, 2, 3, 4, 5, 8, 11, 13, 16, 17]) {
    const diag = maxCutDiagonal(n, n > 1 ? randomEdges(n, Math.min(2 * n, (n * (n - 1)) / 2), 300 + n, true) : []);
    const prepared = prepareDiagonal(diag);
    const shapes: Array<[number, number]> = [[14, 8], [4, 2], [3, 1], [7, 16], [1, 1]];
    for (const [lowBits, tile] of shapes) {
      const options = { threads: 1, lowBits, tile };
      const label = `n=${n} L=${lowBits} C=${tile}`;
      assert.equal(qaoaExpectation(n, prepared, gammas, betas, { ...options, kernel: 'wasm-exact' }), qaoaExpectation(n, prepared, gammas, betas, { ...options, kernel: 'js' }), label);
      sameState(n, qaoaState(n, prepared, gammas, betas, { ...options, kernel: 'wasm-exact' }), qaoaState(n, prepared, gammas, betas, { ...options, kernel: 'js' }), label);
    }
  }
});

test('WebAssembly passes in a thread team equal the single-threaded JavaScript passes', () => {
  for (const threads of [2, 3]) {
    for (const n of [6, 14, 18]) {
      const prepared = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 2 * n, 500 + n, true)), { shared: true });
      const js = qaoaExpectation(n, prepared, gammas, betas, { threads: 1, kernel: 'js' });
      assert.equal(qaoaExpectation(n, prepared, gammas, betas, { threads, kernel: 'wasm-exact' }), js, `n=${n} threads=${threads}`);
      sameState(n, qaoaState(n, prepared, gammas, betas, { threads, kernel: 'wasm-exact' }), qaoaState(n, prepared, gammas, betas, { threads: 1, kernel: 'js' }), `state n=${n} threads=${threads}`);
    }
  }
});

test('the arena re-copies the index when another diagonal of the same size comes, and reuses it for the same one', () => {
  const n = 10;
  const a = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 20, 1, true)));
  const b = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 20, 2, true)));
  for (const d of [a, b, a, a, b]) {
    assert.equal(qaoaExpectation(n, d, gammas, betas, { kernel: 'wasm-exact', threads: 1 }), qaoaExpectation(n, d, gammas, betas, { kernel: 'js', threads: 1 }));
  }
  releaseArena();
  assert.equal(qaoaExpectation(n, b, gammas, betas, { kernel: 'wasm-exact', threads: 1 }), qaoaExpectation(n, b, gammas, betas, { kernel: 'js', threads: 1 }));
});

test('a raw diagonal (too many distinct values) and a job past the memory budget take the JavaScript passes', () => {
  const n = 17;
  const raw = new Float64Array(2 ** n).map((_, z) => Math.sin(z) * 1000 + z / 7);
  const prepared = prepareDiagonal(raw);
  assert.equal(prepared.index, null);
  assert.equal(arenaJob(n, prepared, undefined), null);
  assert.equal(qaoaExpectation(n, prepared, gammas, betas, { kernel: 'wasm-exact', threads: 1 }), qaoaExpectation(n, prepared, gammas, betas, { kernel: 'js', threads: 1 }));
  const indexed = prepareDiagonal(maxCutDiagonal(12, randomEdges(12, 24, 3, true)));
  releaseArena();
  // a budget with room for the state but not the arena's index copy: no arena, the plain path runs
  assert.equal(arenaJob(12, indexed, 2 ** 12 * 16 + 1024), null);
  assert.ok(arenaBytes(12, indexed) > 2 ** 12 * 16 + 1024);
  assert.equal(qaoaExpectation(12, indexed, gammas, betas, { threads: 1, budgetBytes: 2 ** 12 * 16 + 1024 }), qaoaExpectation(12, indexed, gammas, betas, { kernel: 'js', threads: 1 }));
});

test('the committed qaoa-passes.wasm and qaoa-passes-fma.wasm are what the AssemblyScript source compiles to (npm run build:kernels)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kernels-'));
  try {
    const root = new URL('../../../', import.meta.url).pathname;
    const asc = join(root, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
    for (const [target, file] of [['exact', 'qaoa-passes.wasm'], ['fma', 'qaoa-passes-fma.wasm']] as const) {
      const out = join(dir, file);
      execFileSync(process.execPath, [asc, 'src/quantum/simulator/wasm/qaoa-passes.as.ts', '--config', 'src/quantum/simulator/wasm/asconfig.json', '--target', target, '-o', out], { cwd: root, stdio: 'pipe' });
      const committed = readFileSync(new URL(`../../../src/quantum/simulator/wasm/${file}`, import.meta.url));
      assert.ok(readFileSync(out).equals(committed), `the committed ${file} differs from a fresh build: run npm run build:kernels and commit it`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Node 24 runs the fused build (relaxed SIMD), and it is the default unless SVC_SIM_FMA turns it off', () => {
  assert.ok(wasmPassesModule('fma') !== null);
  assert.equal(chooseVariant('default', {}), 'fma');
  for (const off of ['off', '0', 'false', 'no', ' OFF ']) {
    assert.equal(fmaDisabledByEnv({ SVC_SIM_FMA: off }), true, off);
    assert.equal(chooseVariant('default', { SVC_SIM_FMA: off }), 'exact', off);
    // asked for by name, each build runs whatever the variable says
    assert.equal(chooseVariant('fma', { SVC_SIM_FMA: off }), 'fma', off);
  }
  for (const on of ['on', '1', '']) assert.equal(chooseVariant('default', { SVC_SIM_FMA: on }), 'fma', on);
  assert.equal(chooseVariant('exact', {}), 'exact');
});

function close(a: number, b: number, label: string): void {
  if (!(Math.abs(a - b) <= 1e-12)) assert.fail(`${label}: ${a} vs ${b} (|Δ| = ${Math.abs(a - b)})`);
}

test('the fused passes agree with the JavaScript passes to 1e-12: ⟨C⟩ and every amplitude, n = 1..18, p = 1..6', () => {
  let differing = 0;
  for (const n of [1, 2, 3, 5, 8, 12, 16, 18]) {
    const diag = maxCutDiagonal(n, n > 1 ? randomEdges(n, Math.min(3 * n, (n * (n - 1)) / 2), 700 + n, true) : []);
    const prepared = prepareDiagonal(diag);
    for (const p of [1, 3, 6]) {
      const gs = Array.from({ length: p }, (_, l) => 0.9 * Math.sin(1.3 * l + n));
      const bs = Array.from({ length: p }, (_, l) => 1.7 * Math.cos(0.7 * l + n));
      const options = { threads: 1 };
      const label = `n=${n} p=${p}`;
      const js = qaoaExpectation(n, prepared, gs, bs, { ...options, kernel: 'js' });
      close(qaoaExpectation(n, prepared, gs, bs, { ...options, kernel: 'wasm-fma' }), js, label);
      const a = qaoaState(n, prepared, gs, bs, { ...options, kernel: 'wasm-fma' });
      const b = qaoaState(n, prepared, gs, bs, { ...options, kernel: 'js' });
      for (let z = 0; z < 2 ** n; z++) {
        close(a.re[z]!, b.re[z]!, `${label} re[${z}]`);
        close(a.im[z]!, b.im[z]!, `${label} im[${z}]`);
        if (a.re[z] !== b.re[z] || a.im[z] !== b.im[z]) differing++;
      }
    }
  }
  // the fused build really fuses here (the test machines have FMA): some last bits differ
  assert.ok(differing > 0, 'the fused passes gave the exact passes\' bits everywhere: no multiply-add was fused');
});

test('the fused passes give the same bits on any thread count, and qaoaExpectation uses them by default', () => {
  for (const n of [14, 18]) {
    const prepared = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 2 * n, 900 + n, true)), { shared: true });
    const one = qaoaExpectation(n, prepared, gammas, betas, { threads: 1, kernel: 'wasm-fma' });
    assert.equal(qaoaExpectation(n, prepared, gammas, betas, { threads: 2, kernel: 'wasm-fma' }), one, `n=${n}`);
    sameState(n, qaoaState(n, prepared, gammas, betas, { threads: 2, kernel: 'wasm-fma' }), qaoaState(n, prepared, gammas, betas, { threads: 1, kernel: 'wasm-fma' }), `state n=${n}`);
    if (!fmaDisabledByEnv()) assert.equal(qaoaExpectation(n, prepared, gammas, betas, { threads: 1 }), one, `default n=${n}`);
  }
});

test('phase and qubits 0, 1 in one sweep (default) or two (fusePhase: false) give the same bits, in both builds', () => {
  for (const n of [3, 9, 15]) {
    const prepared = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, Math.min(2 * n, (n * (n - 1)) / 2), 40 + n, true)));
    for (const kernel of ['wasm-exact', 'wasm-fma'] as const) {
      const options = { threads: 1, kernel, lowBits: 12 };
      assert.equal(qaoaExpectation(n, prepared, gammas, betas, options), qaoaExpectation(n, prepared, gammas, betas, { ...options, fusePhase: false }), `n=${n} ${kernel}`);
      sameState(n, qaoaState(n, prepared, gammas, betas, options), qaoaState(n, prepared, gammas, betas, { ...options, fusePhase: false }), `state n=${n} ${kernel}`);
    }
  }
});
