import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { checkJsonBody, MAX_JSON_DEPTH, parseJsonBody as parseBytes, scanJson } from '../../src/shared/json-body.ts';

const parseJsonBody = (text: string, limits?: { maxValues?: number }) => parseBytes(Buffer.from(text), limits);

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

test('scanJson reads depth and an upper bound on values from the bytes, ignoring strings', () => {
  const scan = (text: string) => scanJson(Buffer.from(text));
  assert.deepEqual(scan('{"a":[1,2,3],"b":{"c":null}}'), { depth: 2, values: 7, containers: 3 });
  // Brackets, braces, commas and escaped quotes inside strings are text.
  assert.deepEqual(scan('["[[[,,,{{{", "a\\"[[,"]'), { depth: 1, values: 3, containers: 1 });
  assert.deepEqual(scan('3'), { depth: 0, values: 1, containers: 0 });
  for (const text of ['[]', '[1,[2,{}]]', '{"k":[[],[[1]]]}', JSON.stringify({ messages: [{ role: 'user', content: 'x, y' }] })]) {
    let real = 0;
    const walk = (v: unknown): void => {
      real++;
      if (typeof v === 'object' && v !== null) for (const child of Object.values(v)) walk(child);
    };
    walk(JSON.parse(text));
    assert.ok(scan(text).values >= real, text);
  }
  assert.throws(() => checkJsonBody(Buffer.from('['.repeat(MAX_JSON_DEPTH + 1)), {}), refusedWith('json_too_complex'));
  assert.throws(() => checkJsonBody(Buffer.from('[1,2,3,4]'), { maxValues: 4 }), refusedWith('json_too_complex'));
  assert.doesNotThrow(() => checkJsonBody(Buffer.from('[1,2,3,4]'), { maxValues: 5 }));
  // Objects and arrays are bounded apart from values: they cost most to parse and clone.
  assert.throws(() => checkJsonBody(Buffer.from('[{},[],{"a":[]}]'), { maxContainers: 4 }), refusedWith('json_too_complex'));
  assert.doesNotThrow(() => checkJsonBody(Buffer.from('[{},[],{"a":[]}]'), { maxContainers: 5 }));
});
