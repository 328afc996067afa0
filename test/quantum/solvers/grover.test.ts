import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probabilities } from '../../../src/quantum/simulator/measure.ts';
import { seededRng } from '../../../src/quantum/simulator/rng.ts';
import { StateVector } from '../../../src/quantum/simulator/state-vector.ts';
import { patternSearchProblemSchema, qrngProblemSchema } from '../../../src/quantum/solve-schemas.ts';
import { GROVER_MAX_QUBITS, groverCircuit, groverIterations, groverState, solvePatternSearch, splitRecords } from '../../../src/quantum/solvers/grover-search.ts';
import { solveQrng } from '../../../src/quantum/solvers/grover-qrng.ts';
import { patternProblem } from '../fixtures.ts';

const search = (problem: Record<string, unknown>, seed = 1) => solvePatternSearch(patternSearchProblemSchema.parse(problem), { shots: 1024, rng: seededRng(seed) });

describe('grover / pattern_search', () => {
  it('reaches the textbook success probability sin²((2k+1)θ)', () => {
    for (const [n, marked] of [
      [4, [3]],
      [6, [5, 40]],
      [8, [1, 2, 3]],
    ] as [number, number[]][]) {
      const k = groverIterations(2 ** n, marked.length);
      const state = groverState(n, marked, k);
      const p = marked.reduce((s, z) => s + state.re[z]! ** 2, 0);
      const theta = Math.asin(Math.sqrt(marked.length / 2 ** n));
      assert.ok(Math.abs(p - Math.sin((2 * k + 1) * theta) ** 2) < 1e-12, `n=${n}: ${p}`);
    }
  });

  it('simulates exactly what the gate circuit (oracle X·MCZ·X, diffusion H X MCZ X H) does', () => {
    const marked = [2, 9, 13];
    const k = groverIterations(16, marked.length);
    const viaGates = StateVector.zero(4);
    groverCircuit(4, marked, k).run(viaGates);
    const fused = groverState(4, marked, k);
    for (let z = 0; z < 16; z++) {
      assert.ok(Math.abs(viaGates.re[z]! - fused.re[z]!) < 1e-12 && Math.abs(viaGates.im[z]!) < 1e-12, `amplitude ${z}`);
    }
    assert.ok(Math.abs(probabilities(fused).reduce((a, b) => a + b, 0) - 1) < 1e-12);
  });

  it('finds the matching record with high confidence', () => {
    const { solution, meta } = search(patternProblem(64, 37));
    assert.equal(solution['found'], true);
    assert.equal(solution['target_index'], 37);
    assert.equal(solution['iterations'], 6);
    assert.equal(solution['qubits'], 6);
    assert.ok((solution['confidence'] as number) > 0.95);
    assert.ok(meta.optimal_count > 950);
    assert.ok(Math.abs(meta.energy + (solution['success_probability'] as number)) < 1e-12);
    assert.ok(meta.depth > 6);
  });

  it('answers "not found" clearly when nothing matches or confidence is too low', () => {
    const none = search({ ...patternProblem(32, 5), target: { pattern: 'NOPE', min_confidence: 0.5 } });
    assert.equal(none.solution['found'], false);
    assert.equal(none.solution['target_index'], -1);
    assert.match(none.solution['reason'] as string, /no record matches/);
    // 32 records, one match, but min_confidence 1 cannot be reached by sampling at p ≈ 0.999
    const strict = search({ ...patternProblem(32, 5), target: { pattern: 'FRAUD', min_confidence: 1 } }, 4);
    if (strict.solution['confidence'] !== 1) {
      assert.equal(strict.solution['found'], false);
      assert.match(strict.solution['reason'] as string, /below min_confidence/);
    }
  });

  it('a confidence just below min_confidence is shown rounded down, never at or above it', () => {
    let nearestWouldContradict = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const confidence = search(patternProblem(32, 5), seed).solution['confidence'] as number;
      if (confidence >= 0.999) continue;
      const min = confidence + 1e-6;
      if (Number(confidence.toFixed(4)) >= min) nearestWouldContradict++;
      const { solution } = search({ ...patternProblem(32, 5), target: { pattern: 'FRAUD', min_confidence: min } }, seed);
      assert.equal(solution['confidence'], confidence, 'the same seed samples the same shots');
      assert.equal(solution['found'], false);
      const shown = Number(/^confidence ([\d.]+) is below/.exec(solution['reason'] as string)![1]);
      assert.ok(shown <= confidence && confidence - shown < 1e-4, `shown ${shown} for ${confidence}`);
    }
    assert.ok(nearestWouldContradict > 0, 'the seeds include a confidence that rounds up to the nearest 1e-4 past min_confidence');
  });

  it('accepts /regex/flags patterns and CRLF datasets', () => {
    assert.deepEqual(splitRecords('a\r\nb\r\n'), ['a', 'b']);
    const { solution } = search({ dataset: 'alpha\r\nBeta 42\r\ngamma\r\n', type: 'pattern_search', target: { pattern: '/beta \\d+/i', min_confidence: 0.5 }, search_space_size: 3 });
    assert.equal(solution['target_index'], 1);
    assert.equal(solution['qubits'], 2);
  });

  it('rejects a search space smaller than the dataset (422, named field)', () => {
    assert.throws(() => search({ ...patternProblem(10, 3), search_space_size: 4 }), (e: { status?: number; param?: string }) => e.status === 422 && e.param === 'problem.search_space_size');
  });

  it('simulates Grover above the old 20-qubit ceiling (21 qubits here) and finds the record', () => {
    assert.ok(GROVER_MAX_QUBITS >= 21);
    const lines = ['order-0 ok', 'order-1 ok', 'order-2 status=FRAUD', 'order-3 ok'];
    const { solution } = search({ type: 'pattern_search', dataset: lines.join('\n'), target: { pattern: 'FRAUD', min_confidence: 0.5 }, search_space_size: 2 ** 20 + 1 });
    assert.equal(solution['method'], 'grover');
    assert.equal(solution['qubits'], 21);
    assert.equal(solution['target_index'], 2);
    assert.ok((solution['success_probability'] as number) > 0.99);
  });

  it('falls back to a labelled classical scan beyond the Grover qubit ceiling', () => {
    const { solution } = search({ ...patternProblem(8, 6), search_space_size: 2 ** 40 });
    assert.equal(solution['method'], 'classical_scan');
    assert.equal(solution['target_index'], 6);
  });
});

describe('grover / qrng', () => {
  it('returns exactly the requested bits in each format', () => {
    const hex = solveQrng(qrngProblemSchema.parse({ type: 'qrng', bits: 100, format: 'hex' }), undefined);
    assert.match(hex.solution['entropy'] as string, /^[0-9a-f]{26}$/);
    const b64 = solveQrng(qrngProblemSchema.parse({ type: 'qrng', bits: 256, format: 'base64' }), undefined);
    assert.equal(Buffer.from(b64.solution['entropy'] as string, 'base64').length, 32);
    const bin = solveQrng(qrngProblemSchema.parse({ type: 'qrng', bits: 37, format: 'binary' }), undefined);
    assert.match(bin.solution['entropy'] as string, /^[01]{37}$/);
    assert.equal(bin.solution['substrate'], 'simulated');
    assert.equal(bin.solution['randomness_source'], 'os_csprng');
    assert.equal(hex.meta.shots, Math.ceil(100 / 16));
  });

  it('draws fresh, balanced entropy every time', () => {
    const p = qrngProblemSchema.parse({ type: 'qrng', bits: 8192, format: 'binary' });
    const a = solveQrng(p, undefined).solution['entropy'] as string;
    const b = solveQrng(p, undefined).solution['entropy'] as string;
    assert.notEqual(a, b);
    const ones = [...a].filter((c) => c === '1').length;
    // 8192 fair bits: mean 4096, sd ≈ 45; 6 sd either side
    assert.ok(Math.abs(ones - 4096) < 270, `${ones} ones`);
  });
});

describe('grover / pattern_search: safe patterns, many matches, no matches', () => {
  it('runs a catastrophic-backtracking regex in linear time', { timeout: 60_000 }, () => {
    // on a backtracking engine /(a+)+$/ against 'aaa…ab' takes ~2^60 steps: this would never return
    const dataset = ['x', `${'a'.repeat(60)}b`, 'aaaa'].join('\n');
    const { solution } = search({ type: 'pattern_search', dataset, target: { pattern: '/(a+)+$/', min_confidence: 0.5 }, search_space_size: 3 });
    assert.equal(solution['match_count'], 1);
    assert.equal(solution['target_index'], 2);
  });

  it('refuses patterns the linear engine cannot run (422 naming problem.target.pattern)', () => {
    assert.throws(
      () => search({ type: 'pattern_search', dataset: 'aa\nab', target: { pattern: '/(a)\\1/', min_confidence: 0.5 }, search_space_size: 2 }),
      (e: { status?: number; param?: string; message?: string }) => e.status === 422 && e.param === 'problem.target.pattern' && /linear/.test(e.message ?? ''),
    );
  });

  it('keeps the i flag on the linear engine by folding ASCII letters', () => {
    const { solution } = search({ type: 'pattern_search', dataset: 'xx\nID-7F\nzz', target: { pattern: '/^id-[0-9a-f]+$/i', min_confidence: 0.5 }, search_space_size: 3 });
    assert.equal(solution['match_count'], 1);
    assert.equal(solution['target_index'], 1);
  });

  it('widens the register so that 4 matches out of 8 are still amplified', () => {
    const dataset = ['hit', 'no', 'hit', 'no', 'hit', 'no', 'hit', 'no'].join('\n');
    const { solution } = search({ type: 'pattern_search', dataset, target: { pattern: 'hit', min_confidence: 0.9 }, search_space_size: 8 });
    assert.equal(solution['qubits'], 4);
    assert.ok((solution['success_probability'] as number) > 0.9, String(solution['success_probability']));
    assert.equal(solution['found'], true);
    assert.equal(((solution['target_index'] as number) % 2), 0);
    assert.ok(typeof solution['register_widened'] === 'string');
  });

  it('runs no Grover rounds when nothing matches, and says so', () => {
    const { solution, meta } = search({ ...patternProblem(16, 3), target: { pattern: 'NOPE', min_confidence: 0.5 } });
    assert.equal(solution['found'], false);
    assert.equal(solution['iterations'], 0);
    assert.equal(meta.shots, 0);
    assert.match(solution['reason'] as string, /no Grover iterations were run/);
  });

  it('the classical scan reports energy 0, not a made-up value', () => {
    const { meta } = search({ ...patternProblem(8, 6), search_space_size: 2 ** 40 });
    assert.equal(meta.energy, 0);
  });
});
