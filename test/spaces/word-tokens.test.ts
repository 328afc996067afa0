import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldedWords } from '../../src/spaces/word-tokens.ts';

/** The definition foldedWords follows (FTS5's unicode61 words, folded), written with the Unicode regex. */
function byRegex(text: string): string[] {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
}

test('foldedWords: ASCII text (the char-code scan) splits as the Unicode regex does, for every ASCII character', () => {
  for (let code = 0; code < 128; code++) {
    const c = String.fromCharCode(code);
    for (const text of [`a${c}b`, `${c}x9${c}`, c, `${c}${c}Word${c}`]) assert.deepEqual(foldedWords(text), byRegex(text), `around char code ${code}`);
  }
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < 2000; i++) {
    const text = Array.from({ length: next() % 60 }, () => String.fromCharCode(next() % 128)).join('');
    assert.deepEqual(foldedWords(text), byRegex(text), JSON.stringify(text));
  }
});

test('foldedWords: text with any non-ASCII character folds diacritics and compatibility forms', () => {
  assert.deepEqual(foldedWords('Crème Brûlée, ﬁne ½ KZ-35'), ['creme', 'brulee', 'fine', '1', '2', 'kz', '35']);
  assert.deepEqual(foldedWords('naïve—café'), byRegex('naïve—café'));
});
