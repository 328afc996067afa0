/**
 * Bounding the exponents of node-llama-cpp's JSON number rules, on the library's own grammar
 * output and on real llama.cpp (which must accept the rewritten grammar).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getLlama } from 'node-llama-cpp';
import { boundNumberExponents } from '../../src/inference/bound-number-exponents.ts';

test('boundNumberExponents: node-llama-cpp\'s JSON grammar keeps numbers finite (no 1e999, which parses to Infinity)', async () => {
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1, progressLogs: false });
  try {
    const compiled = await llama.createGrammarForJsonSchema({ type: 'object', properties: { servings: { type: 'number' }, count: { type: 'integer' } } });
    const bounded = boundNumberExponents(compiled.grammar);
    // The rule this works on is in the library's grammar (an upgrade that changes it fails here).
    assert.notEqual(bounded, compiled.grammar);
    assert.ok(!bounded.includes('[eE] [-+]? ("0" | [1-9] [0-9]{0,15})'), bounded);
    const rule = (name: string) => bounded.split('\n').find((line) => line.startsWith(`${name} ::= `)) ?? '';
    assert.match(rule('fractional-number-rule'), /\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\?\)/);
    // An integer has no exponent at all (659e-89 is not an integer), and at most 15 digits (safe).
    assert.equal(rule('integer-number-rule'), 'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,14})');
    assert.ok(Number.isSafeInteger(-Number('9'.repeat(15))));
    // llama.cpp accepts the bounded grammar.
    await llama.createGrammar({ grammar: bounded });
    // The largest number the bounded rule allows is finite.
    assert.ok(Number.isFinite(Number(`-${'9'.repeat(16)}.${'9'.repeat(16)}e99`)));
  } finally {
    await llama.dispose();
  }
});
