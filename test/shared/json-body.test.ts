import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { MAX_JSON_DEPTH, parseJsonBody } from '../../src/shared/json-body.ts';

const refusedWith = (code: string) => (error: unknown) => error instanceof ApiError && error.status === 400 && error.code === code;

test('parses JSON bodies and refuses empty, malformed and prototype-poisoning ones', () => {
  assert.deepEqual(parseJsonBody('{"a":[1,{"b":"c"}]}'), { a: [1, { b: 'c' }] });
  assert.throws(() => parseJsonBody(''), refusedWith('invalid_json'));
  assert.throws(() => parseJsonBody('  \n'), refusedWith('invalid_json'));
  assert.throws(() => parseJsonBody('{"a":'), refusedWith('invalid_json'));
  assert.throws(() => parseJsonBody('{"__proto__":{"x":1}}'), refusedWith('invalid_json'));
  assert.throws(() => parseJsonBody('{"constructor":{"prototype":{"x":1}}}'), refusedWith('invalid_json'));
  // As values, prototype names are ordinary strings.
  assert.deepEqual(parseJsonBody('{"type":"__proto__"}'), { type: '__proto__' });
});

test('bounds nesting depth and the number of values', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  assert.doesNotThrow(() => parseJsonBody(nested(MAX_JSON_DEPTH)));
  assert.throws(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1)), refusedWith('json_too_complex'));
  assert.throws(() => parseJsonBody(nested(1_000_000)), refusedWith('json_too_complex'));
  assert.throws(() => parseJsonBody(`{"a":${nested(70)}}`), refusedWith('json_too_complex'));
  const values = JSON.stringify(Array.from({ length: 1000 }, (_, i) => i));
  assert.doesNotThrow(() => parseJsonBody(values, { maxValues: 1001 }));
  assert.throws(() => parseJsonBody(values, { maxValues: 1000 }), refusedWith('json_too_complex'));
});
