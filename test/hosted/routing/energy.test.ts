import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { billableJoules, completionTokenBudget, estimateJoules, minimumJoules, nextTokenExceeds, promptTokenBound, TEMPLATE_TOKENS_FOR_TOOLS, TEMPLATE_TOKENS_PER_MESSAGE, TEMPLATE_TOKENS_PER_PROMPT } from '../../../src/hosted/routing/energy.ts';

const profile = { joules_per_prompt_token: 0.05, joules_per_completion_token: 0.2, joules_per_second: 3 };

describe('energy', () => {
  it('estimates prompt, completion and wall-time energy, rounded to the millijoule', () => {
    // 100 × 0.05 + 10 × 0.2 + 1.5 × 3 = 5 + 2 + 4.5
    assert.equal(estimateJoules(profile, { promptTokens: 100, completionTokens: 10, seconds: 1.5 }), 11.5);
    assert.equal(estimateJoules(profile, { promptTokens: 1, completionTokens: 0, seconds: 0.00012345 }), 0.05);
    assert.equal(estimateJoules(profile, { promptTokens: 0, completionTokens: 0, seconds: -4 }), 0);
  });

  it('the minimum is the prompt and one completion token', () => {
    assert.equal(minimumJoules(profile, 100), 5.2);
  });

  it('the completion budget is what fits under the ceiling after the prompt', () => {
    assert.equal(completionTokenBudget(profile, 100, 6), 5); // (6 − 5) / 0.2
    assert.equal(completionTokenBudget(profile, 100, 5.3), 1);
    assert.equal(completionTokenBudget(profile, 100, 4), 0);
    assert.equal(completionTokenBudget(profile, 100, 6, 0.2), 2); // 0.6 J of load already spent
    assert.equal(completionTokenBudget({ ...profile, joules_per_completion_token: 0 }, 1, 1), Number.POSITIVE_INFINITY);
  });

  it('stops before the token that would cross the ceiling', () => {
    const use = { promptTokens: 100, completionTokens: 4, seconds: 0 };
    assert.equal(nextTokenExceeds(profile, use, 6), false); // the 5th token lands at 6.0 exactly
    assert.equal(nextTokenExceeds(profile, { ...use, completionTokens: 5 }, 6), true);
  });

  it('bills the larger of the measured and the estimated work, never cut to a ceiling', () => {
    assert.equal(billableJoules({ raw: 3.2, estimated: 5 }), 5);
    assert.equal(billableJoules({ raw: 9, estimated: 5 }), 9);
    assert.equal(billableJoules({ raw: null, estimated: 5 }), 5);
    assert.equal(billableJoules({ raw: null, estimated: 5.0004 }), 5);
    assert.equal(billableJoules({ raw: null, estimated: 0.12349 }), 0.123);
  });

  it('bounds prompt tokens from above: every UTF-8 byte, the template around each message, and the tools', () => {
    const base = TEMPLATE_TOKENS_PER_PROMPT;
    assert.equal(promptTokenBound([{ role: 'user', content: 'abcdefgh' }]), base + 4 + 8 + TEMPLATE_TOKENS_PER_MESSAGE);
    // Dense text: 'é' is 2 bytes, '𝄞' 4; each byte may be a token of its own (byte fallback).
    assert.equal(promptTokenBound([{ role: 'user', content: 'é𝄞' }]), base + 4 + 6 + TEMPLATE_TOKENS_PER_MESSAGE);
    const tools = [{ name: 'lookup', description: 'word '.repeat(440), parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
    const withTools = promptTokenBound([{ role: 'user', content: 'hi' }], { tools });
    assert.equal(withTools, base + 4 + 2 + TEMPLATE_TOKENS_PER_MESSAGE + Buffer.byteLength(JSON.stringify(tools)) + TEMPLATE_TOKENS_FOR_TOOLS);
    assert.ok(withTools > 2000, 'a long tool description counts in full');
    // Earlier tool calls and their ids count too.
    const calls = promptTokenBound([{ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }] }]);
    assert.equal(calls, base + 'assistant'.length + 'call_1'.length + 1 + 7 + TEMPLATE_TOKENS_PER_MESSAGE);
  });
});
