import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Token } from 'node-llama-cpp';
import { TokenCappedText } from '../../src/inference/token-capped-text.ts';

// Tokens are byte values here: the detokenizer decodes them as UTF-8 after the last tokens' bytes.
const detokenize = (tokens: readonly Token[], last: readonly Token[]): string => {
  const whole = Buffer.from([...last, ...tokens]).toString('utf8');
  return whole.slice(Buffer.from([...last]).toString('utf8').length);
};
const bytes = (s: string): Token[] => [...Buffer.from(s, 'utf8')] as Token[];

function feed(maxTokens: number, chunks: string[]): { out: string[]; capped: TokenCappedText } {
  const capped = new TokenCappedText(maxTokens, detokenize);
  const out = chunks.map((chunk) => {
    capped.tokens(bytes(chunk));
    return capped.chunk(chunk);
  });
  return { out, capped };
}

test('chunks within the limit pass unchanged', () => {
  const { out, capped } = feed(5, ['ab', 'c€'.slice(0, 1), 'de']);
  assert.deepEqual(out, ['ab', 'c', 'de']);
  assert.equal(capped.overran, false);
});

test('a chunk past the limit keeps the text of the tokens within it, less a character they end inside of', () => {
  // '€' is 3 bytes: with 3 tokens allowed, 'a' and two bytes of '€' fit, so only 'a' comes back.
  assert.deepEqual(feed(3, ['a', '€m']).out, ['a', '']);
  assert.deepEqual(feed(4, ['a', '€m']).out, ['a', '€']);
  const { out, capped } = feed(3, ['ab', 'cd', 'ef']);
  assert.deepEqual(out, ['ab', 'c', '']);
  assert.equal(capped.overran, true);
  assert.equal(capped.text, 'abc');
});

test('never half of a surrogate pair', () => {
  // '😀' is 4 bytes and 2 UTF-16 units; 'x😀' whole needs 5 tokens.
  assert.deepEqual(feed(5, ['x😀y']).out, ['x😀']);
  assert.deepEqual(feed(4, ['x😀y']).out, ['x']);
});
