import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseSequence, MIN_REUSED_PREFIX } from '../../src/inference/choose-sequence.ts';

interface Fake { id: number; prompt?: string }
const pick = (free: Fake[], prompt: string): number | undefined => {
  const index = chooseSequence(free, (s) => s.id, (s) => s.prompt, prompt);
  return index < 0 ? undefined : free[index]!.id;
};
const history = 'You are a helpful assistant.\u0000' + 'x'.repeat(MIN_REUSED_PREFIX);

test('no free sequence: none chosen', () => {
  assert.equal(pick([], 'hello'), undefined);
});

test('without a useful shared prefix the lowest sequence id wins, whatever the order in the pool', () => {
  assert.equal(pick([{ id: 3 }, { id: 1 }, { id: 2 }], 'hello'), 1);
  // A short common start (a greeting, the same first word) is not worth a gap in the ids.
  assert.equal(pick([{ id: 2, prompt: 'hello there' }, { id: 0, prompt: 'goodbye' }], 'hello world'), 0);
});

test('the sequence holding the longest prefix of the prompt wins: a follow-up turn finds its conversation', () => {
  const followUp = `${history}\u0000the answer\u0000a follow-up question`;
  assert.equal(pick([{ id: 0, prompt: 'another conversation' }, { id: 3, prompt: history }, { id: 1 }], followUp), 3);
  // Two candidates: the longer match wins; equal matches go to the lower id.
  const longer = `${history} and more`;
  assert.equal(pick([{ id: 1, prompt: history }, { id: 2, prompt: longer }], `${longer} and then some`), 2);
  assert.equal(pick([{ id: 2, prompt: history }, { id: 1, prompt: history }], followUp), 1);
});
