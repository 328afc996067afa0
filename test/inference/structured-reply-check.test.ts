/**
 * The check behind the structured-output guarantee, on results the fixture rarely produces: a
 * generation that ended (`stop`) before its JSON was complete, one whose JSON breaks the schema,
 * and tool calls likewise. Incomplete → `length` with the partial text; invalid → a 500 naming
 * where; valid → unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { GenerateResult } from '../../src/inference/language-model.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { anyObject, checkStructuredReply, schemaCheck } from '../../src/inference/structured-reply-check.ts';

const usage = { promptTokens: 3, completionTokens: 5 };
const text = (t: string, finishReason: GenerateResult['finishReason'] = 'stop'): GenerateResult => ({ text: t, toolCalls: [], finishReason, usage });
const calls = (args: string, name = 'order', finishReason: GenerateResult['finishReason'] = 'tool_calls'): GenerateResult =>
  ({ text: '', toolCalls: [{ id: 'call_1', name, arguments: args }], finishReason, usage });

const ORDER = { type: 'object', properties: { kind: { enum: ['a', 'b'] }, n: { type: 'integer' } }, required: ['kind', 'n'], additionalProperties: false };

function invalid(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof ApiError && error.status === 500 && error.code === 'structured_output_invalid' && pattern.test(error.message);
}

describe('checkStructuredReply', () => {
  test('response_format: a stop before the value is complete says length, with the partial text', () => {
    for (const partial of ['{', '{"kind":"a"', '{"kind":"a","n":1', '']) {
      assert.deepEqual(checkStructuredReply(text(partial), { text: anyObject }), text(partial, 'length'));
    }
  });

  test('response_format: complete and valid is unchanged; complete and invalid is a 500 naming where', () => {
    const check = schemaCheck(ORDER);
    assert.deepEqual(checkStructuredReply(text('{"kind":"a","n":1}'), { text: check }), text('{"kind":"a","n":1}'));
    assert.throws(() => checkStructuredReply(text('{"kind":"c","n":1}'), { text: check }), invalid(/\/kind/));
    assert.throws(() => checkStructuredReply(text('[1]'), { text: anyObject }), invalid(/not an object/));
  });

  test('length and abort are left alone (a cut value is not claimed complete)', () => {
    assert.deepEqual(checkStructuredReply(text('{', 'length'), { text: anyObject }), text('{', 'length'));
    assert.deepEqual(checkStructuredReply(text('{', 'abort'), { text: anyObject }), text('{', 'abort'));
  });

  test('tool calls: incomplete arguments say length; invalid ones or an unknown name are a 500', () => {
    const tools = new Map([['order', schemaCheck(ORDER)]]);
    assert.deepEqual(checkStructuredReply(calls('{"kind":"a","n":2}'), { tools }), calls('{"kind":"a","n":2}'));
    assert.deepEqual(checkStructuredReply(calls('{"kind":"a"'), { tools }), calls('{"kind":"a"', 'order', 'length'));
    assert.throws(() => checkStructuredReply(calls('{"kind":"a","n":2.5}'), { tools }), invalid(/\/n/));
    assert.throws(() => checkStructuredReply(calls('{}', 'other'), { tools }), invalid(/no tool named "other"/));
    assert.deepEqual(checkStructuredReply({ ...calls(''), toolCalls: [] }, { tools }).finishReason, 'length');
  });

  test('a forced call that ended in text without one says length', () => {
    assert.equal(checkStructuredReply(text('hello'), { tools: new Map(), callForced: true }).finishReason, 'length');
    assert.equal(checkStructuredReply(text('hello'), { tools: new Map(), callForced: false }).finishReason, 'stop');
  });

  test('an invalid value is an error, not a retry: a seeded or greedy request is marked not worth retrying', () => {
    const check = { text: schemaCheck(ORDER) };
    const bad = text('{"kind":"c","n":1}');
    const caught = (sampling: { seed?: number; temperature?: number }): ApiError => {
      try {
        checkStructuredReply(bad, check, sampling);
      } catch (error) {
        assert.ok(error instanceof ApiError);
        return error;
      }
      assert.fail('expected an error');
    };
    const sampled = caught({ temperature: 0.8 });
    assert.deepEqual(sampled.headers, {});
    assert.match(sampled.message, /a retry samples anew\.$/);
    const seeded = caught({ seed: 7, temperature: 0.8 });
    assert.deepEqual(seeded.headers, { 'x-should-retry': 'false' });
    assert.match(seeded.message, /the same request repeats it \(seed\): change or drop the seed for another\.$/);
    const greedy = caught({ temperature: 0 });
    assert.deepEqual(greedy.headers, { 'x-should-retry': 'false' });
    assert.match(greedy.message, /\(temperature 0\): change the temperature for another\.$/);
  });

  test('a schema zod cannot read falls back to the grammar schema, then to well-formed JSON only', () => {
    const unreadable = { type: 'object', properties: { a: { $ref: '#/nowhere' } } };
    const fallback = schemaCheck(unreadable, { type: 'object', properties: { a: { type: 'string' } } });
    assert.equal(fallback({ a: 'x' }), undefined);
    assert.match(fallback({ a: 1 }) ?? '', /\/a/);
    assert.equal(schemaCheck({ type: 'object', properties: { b: { $ref: '#/nowhere' } } })({ b: 1 }), undefined);
  });
});
