import assert from 'node:assert/strict';
import { test } from 'node:test';
import { estimateTokens, maxBytesPerToken } from '../../src/inference/token-budget.ts';

test('maxBytesPerToken bounds what one token covers, per tokenizer kind', () => {
  assert.equal(maxBytesPerToken(['a', '▁the', '<0x41>', 'hello'], 'llama'), 6);
  assert.equal(maxBytesPerToken(['ĠĠĠĠĠĠĠĠ'], 'gpt2'), 16);
  // WordPiece folds accents and case: a piece may stand for more bytes than it has.
  assert.equal(maxBytesPerToken(['##ing'], 'bert'), 20);
  // Short vocabularies still allow a 4-byte character per token.
  assert.equal(maxBytesPerToken(['a'], 'llama'), 4);
  // No vocabulary in the metadata: no bound at all (counting decides).
  assert.equal(maxBytesPerToken([], 'llama'), Number.POSITIVE_INFINITY);
});

test('estimateTokens counts in slices, yields between them, and stops past the limit', async () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  const byWords = (text: string) => text.split(' ').filter((w) => w !== '').length;
  const text = words(20_000); // ~130 KB: several slices
  const slices: number[] = [];
  const counting = (t: string) => {
    slices.push(t.length);
    return byWords(t);
  };
  assert.equal(await estimateTokens([text], counting, Number.POSITIVE_INFINITY), 20_000);
  assert.ok(slices.length > 4 && Math.max(...slices) <= 16 * 1024);
  // The event loop runs between slices: a callback that reschedules itself on every turn of
  // the loop has run again by the time each next slice is counted. (A timer would not do: the
  // whole count can take less than its 1 ms.)
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  const turnsAtSlice: number[] = [];
  await estimateTokens([text], (t) => {
    turnsAtSlice.push(turns);
    return byWords(t);
  }, Number.POSITIVE_INFINITY);
  spinning = false;
  assert.ok(turnsAtSlice.length > 4);
  for (let i = 1; i < turnsAtSlice.length; i++) assert.ok(turnsAtSlice[i]! > turnsAtSlice[i - 1]!, `no turn of the event loop between slices ${i - 1} and ${i}`);
  // Past the limit it stops: only the first slices are tokenized.
  slices.length = 0;
  const over = await estimateTokens([text, text], counting, 100);
  assert.ok(over > 100);
  assert.equal(slices.length, 1);
});

test('estimateTokens stops counting for a client that went away, and handles text without spaces', async () => {
  const controller = new AbortController();
  let slices = 0;
  const counting = (t: string) => {
    slices++;
    if (slices === 2) controller.abort(new Error('client disconnected'));
    return t.length;
  };
  await assert.rejects(estimateTokens(['x'.repeat(200_000)], counting, Number.POSITIVE_INFINITY, controller.signal), /client disconnected/);
  assert.equal(slices, 2);
  // No spaces at all: slices are cut at their full size, and every character is counted once.
  assert.equal(await estimateTokens(['y'.repeat(100_000)], (t) => t.length, Number.POSITIVE_INFINITY), 100_000);
});
