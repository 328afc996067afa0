/**
 * The WebAssembly SIMD passes (src/quantum/simulator/wasm) must compute exactly what the
 * JavaScript passes do: same operations, same order, so the states agree bit for bit. Checked
 * across qubit counts (the qubit-0 lane shuffle, odd leftover qubits, n < block size), block and
 * tile shapes (an odd tile falls back to the JavaScript high pass), flipped mixers (|tan β| > 1),
 * thread counts, and a diagonal whose index is swapped between calls. The committed .wasm must be
 * what the AssemblyScript source compiles to.
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
import { wasmPassesModule } from '../../../src/quantum/simulator/wasm-passes.ts';
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
      assert.equal(qaoaExpectation(n, prepared, gammas, betas, { ...options, kernel: 'wasm' }), qaoaExpectation(n, prepared, gammas, betas, { ...options, kernel: 'js' }), label);
      sameState(n, qaoaState(n, prepared, gammas, betas, { ...options, kernel: 'wasm' }), qaoaState(n, prepared, gammas, betas, { ...options, kernel: 'js' }), label);
    }
  }
});

test('WebAssembly passes in a thread team equal the single-threaded JavaScript passes', () => {
  for (const threads of [2, 3]) {
    for (const n of [6, 14, 18]) {
      const prepared = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 2 * n, 500 + n, true)), { shared: true });
      const js = qaoaExpectation(n, prepared, gammas, betas, { threads: 1, kernel: 'js' });
      assert.equal(qaoaExpectation(n, prepared, gammas, betas, { threads, kernel: 'wasm' }), js, `n=${n} threads=${threads}`);
      sameState(n, qaoaState(n, prepared, gammas, betas, { threads, kernel: 'wasm' }), qaoaState(n, prepared, gammas, betas, { threads: 1, kernel: 'js' }), `state n=${n} threads=${threads}`);
    }
  }
});

test('the arena re-copies the index when another diagonal of the same size comes, and reuses it for the same one', () => {
  const n = 10;
  const a = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 20, 1, true)));
  const b = prepareDiagonal(maxCutDiagonal(n, randomEdges(n, 20, 2, true)));
  for (const d of [a, b, a, a, b]) {
    assert.equal(qaoaExpectation(n, d, gammas, betas, { kernel: 'wasm', threads: 1 }), qaoaExpectation(n, d, gammas, betas, { kernel: 'js', threads: 1 }));
  }
  releaseArena();
  assert.equal(qaoaExpectation(n, b, gammas, betas, { kernel: 'wasm', threads: 1 }), qaoaExpectation(n, b, gammas, betas, { kernel: 'js', threads: 1 }));
});

test('a raw diagonal (too many distinct values) and a job past the memory budget take the JavaScript passes', () => {
  const n = 17;
  const raw = new Float64Array(2 ** n).map((_, z) => Math.sin(z) * 1000 + z / 7);
  const prepared = prepareDiagonal(raw);
  assert.equal(prepared.index, null);
  assert.equal(arenaJob(n, prepared, undefined), null);
  assert.equal(qaoaExpectation(n, prepared, gammas, betas, { kernel: 'wasm', threads: 1 }), qaoaExpectation(n, prepared, gammas, betas, { kernel: 'js', threads: 1 }));
  const indexed = prepareDiagonal(maxCutDiagonal(12, randomEdges(12, 24, 3, true)));
  releaseArena();
  // a budget with room for the state but not the arena's index copy: no arena, the plain path runs
  assert.equal(arenaJob(12, indexed, 2 ** 12 * 16 + 1024), null);
  assert.ok(arenaBytes(12, indexed) > 2 ** 12 * 16 + 1024);
  assert.equal(qaoaExpectation(12, indexed, gammas, betas, { threads: 1, budgetBytes: 2 ** 12 * 16 + 1024 }), qaoaExpectation(12, indexed, gammas, betas, { kernel: 'js', threads: 1 }));
});

test('the committed qaoa-passes.wasm is what the AssemblyScript source compiles to (npm run build:kernels)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kernels-'));
  try {
    const out = join(dir, 'qaoa-passes.wasm');
    const root = new URL('../../../', import.meta.url).pathname;
    const asc = join(root, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
    execFileSync(process.execPath, [asc, 'src/quantum/simulator/wasm/qaoa-passes.as.ts', '--config', 'src/quantum/simulator/wasm/asconfig.json', '-o', out], { cwd: root, stdio: 'pipe' });
    const committed = readFileSync(new URL('../../../src/quantum/simulator/wasm/qaoa-passes.wasm', import.meta.url));
    assert.ok(readFileSync(out).equals(committed), 'the committed qaoa-passes.wasm differs from a fresh build: run npm run build:kernels and commit it');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
