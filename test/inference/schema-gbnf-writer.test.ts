/**
 * svc's JSON-Schema → GBNF writer: per keyword, values the grammar must accept and values it
 * must reject, matched by llama.cpp's own grammar engine (LlamaGrammar._testText, what
 * constrains sampling; no model), and the keywords it refuses with a 400 naming them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getLlama, LlamaLogLevel, type Llama, type LlamaGrammar } from 'node-llama-cpp';
import { ApiError } from '../../src/shared/api-error.ts';
import { schemaToGbnf } from '../../src/inference/schema-gbnf-writer.ts';

let llama: Llama;
before(async () => {
  llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.disabled });
});
after(() => llama.dispose());

async function grammarFor(schema: unknown): Promise<LlamaGrammar> {
  return llama.createGrammar({ grammar: schemaToGbnf(schema, 'response_format.json_schema.schema') });
}
const accepts = (g: LlamaGrammar, text: string): boolean => (g as unknown as { _testText(t: string): boolean })._testText(`${text}\n\n\n\n`);

/** Each JSON text in `ok` is accepted, each in `bad` rejected. */
async function check(schema: unknown, ok: string[], bad: string[]): Promise<void> {
  const g = await grammarFor(schema);
  for (const text of ok) assert.ok(accepts(g, text), `${JSON.stringify(schema)} should accept ${text}`);
  for (const text of bad) assert.ok(!accepts(g, text), `${JSON.stringify(schema)} should reject ${text}`);
}

function refused(schema: unknown, keyword: string): void {
  assert.throws(() => schemaToGbnf(schema, 'p'), (e: unknown) => e instanceof ApiError && e.message.includes(`'${keyword}'`));
}

describe('schemaToGbnf', () => {
  test('types, and no type means any value', async () => {
    await check({ type: ['integer', 'null'] }, ['1', '-20', 'null'], ['1.5', '"a"', 'true', '1e5']);
    await check({ minLength: 2 }, ['"ab"', '1', 'null', '{"a": [1]}'], ['"a"']);
    await check({ type: 'number' }, ['1.5', '-0.25e10', '3'], ['1e999', '01', '.5']);
  });

  test('objects: optional properties in order, required, additionalProperties, counts', async () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } }, required: ['b'], additionalProperties: false };
    await check(schema, ['{"b": "x"}', '{"a": 1, "b": "x"}', '{\n  "a": 1,\n  "b": "x"\n}'], ['{}', '{"a": 1}', '{"b": "x", "c": 1}', '{"b": 1}']);
    await check({ type: 'object', properties: { a: {} } }, ['{}', '{"a": 1, "zz": true}'], ['{"zz": 1, "a": 2, "a": 3}']);
    // An added property never takes a listed name (it would escape that property's schema).
    await check({ type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: { type: 'string' } }, ['{"b": "x"}', '{"a": 1, "ab": "x"}'], ['{"a": "x"}']);
    await check({ type: 'object', minProperties: 1, maxProperties: 2 }, ['{"x": 1}', '{"x": 1, "y": 2}'], ['{}', '{"x": 1, "y": 2, "z": 3}']);
    await check({ type: 'object', patternProperties: { '^v[0-9]$': { type: 'boolean' } }, additionalProperties: false }, ['{"v1": true}'], ['{"v1": 1}', '{"w": true}']);
  });

  test('arrays: prefixItems, items, minItems, maxItems', async () => {
    await check({ type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'integer' }, minItems: 2, maxItems: 3 }, ['["a", 1]', '["a", 1, 2]'], ['["a"]', '["a", 1, 2, 3]', '[1, 1]', '["a", "b"]']);
    await check({ type: 'array', items: false }, ['[]'], ['[1]']);
  });

  test('strings: lengths, pattern, formats', async () => {
    await check({ type: 'string', minLength: 1, maxLength: 2 }, ['"a"', '"ab"', '"\\n"'], ['""', '"abc"']);
    await check({ type: 'string', pattern: '^[a-c]+-[0-9]{2}$' }, ['"ab-12"'], ['"ab-1"', '"ad-12"', '"xab-12"']);
    await check({ type: 'string', pattern: 'x|y\\d' }, ['"axb"', '"y1"', '"zzy9zz"'], ['"abc"', '"y"']);
    await check({ type: 'string', format: 'date' }, ['"2024-02-29"', '"2023-12-31"'], ['"2023-02-29"', '"2023-04-31"', '"2023-1-01"', '"1900-02-29"']);
    await check({ type: 'string', format: 'uuid' }, ['"2eb8aa08-aa98-11ea-b4aa-73b441d16380"'], ['"2eb8aa08-aa98-11ea-b4aa-73b441d1638"']);
    await check({ type: 'string', format: 'ipv4' }, ['"192.168.0.255"'], ['"256.1.1.1"', '"01.1.1.1"']);
  });

  test('numbers: exact bounds', async () => {
    await check({ type: 'integer', minimum: -5, maximum: 120 }, ['-5', '0', '99', '120'], ['-6', '121', '1000', '5.5']);
    await check({ type: 'number', exclusiveMinimum: 1.1, maximum: 3 }, ['1.11', '2', '3', '3.0', '1.2'], ['1.1', '1.10', '1', '3.01', '-2']);
    await check({ type: 'number', exclusiveMaximum: 0 }, ['-0.5', '-3'], ['0', '-0', '0.5']);
    await check({ type: 'integer', multipleOf: 3 }, ['0', '9', '-12', '300'], ['10', '4']);
  });

  test('enum/const of any JSON value, anyOf/oneOf, allOf, not', async () => {
    await check({ enum: [{ a: [1, null] }, 'x', 2] }, ['{"a": [1, null]}', '"x"', '2'], ['{"a": [1]}', '3']);
    await check({ anyOf: [{ type: 'string', maxLength: 1 }, { type: 'integer', minimum: 10 }] }, ['"a"', '11'], ['"ab"', '9']);
    await check({ allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { a: { minimum: 5 } } }] }, ['{"a": 5}'], ['{"a": 4}', '{}']);
    await check({ not: { type: ['string', 'null'] } }, ['1', 'true', '[]'], ['"a"', 'null']);
  });

  test('$ref: $defs, recursion, $id and anchors', async () => {
    const tree = { $defs: { node: { type: 'object', properties: { v: { type: 'integer' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } }, additionalProperties: false } }, $ref: '#/$defs/node' };
    await check(tree, ['{"v": 1, "kids": [{"v": 2, "kids": []}]}'], ['{"v": 1, "kids": [{"v": "x"}]}']);
    await check({ $id: 'https://x.test/root', $defs: { a: { $anchor: 'num', type: 'integer' } }, items: { $ref: '#num' }, type: 'array' }, ['[1, 2]'], ['["a"]']);
  });

  test('contains with minContains/maxContains, items beside it', async () => {
    await check({ contains: { minimum: 5 } }, ['[5]', '[1, 7]', '[\n  1,\n  6\n]', '"x"'], ['[]', '[1, 2]', '[4.99]']);
    await check({ contains: { const: 1 }, minContains: 2 }, ['[1, 1]', '[1, 2, 1]', '[2, 1, 3, 1, 1]'], ['[1]', '[2, 2]', '[]']);
    await check({ contains: { const: 1 }, maxContains: 1 }, ['[1]', '[1, 2]', '[2, 1.5, 1]'], ['[1, 1]', '[]', '[2]', '[1, 1.0]']);
    await check({ contains: { const: 1 }, minContains: 0, maxContains: 1 }, ['[]', '[2]', '[1]'], ['[1, 1]']);
    await check({ contains: { type: 'integer' }, minContains: 3, maxContains: 1 }, ['"x"'], ['[1]', '[1, 1, 1]']);
    await check({ type: 'array', items: { type: 'integer' }, contains: { const: 2 } }, ['[1, 2]'], ['["a", 2]', '[1]']);
    await check({ contains: false }, ['"x"', '{}'], ['[]', '[1]']);
  });

  test('if/then/else and dependencies as alternatives, exact or a subset', async () => {
    await check({ if: { exclusiveMaximum: 0 }, then: { minimum: -10 }, else: { multipleOf: 2 } }, ['-1', '-10', '0', '4', '"x"'], ['-11', '3']);
    await check({ if: { type: 'string' }, else: { type: 'integer' } }, ['"a"', '3'], ['true', '1.5']);
    await check({ if: { const: 1 }, then: false }, ['2', '0.5', '"a"'], ['1', '1.0']);
    // ¬(pattern) is not written: only `then`'s values (a subset), never a string `then` forbids.
    await check({ type: 'string', if: { pattern: '^a' }, then: { maxLength: 2 } }, ['"ab"', '"b"'], ['"abc"']);
    await check({ type: 'object', dependentRequired: { bar: ['foo'] } }, ['{}', '{"foo": 1}', '{"foo": 1, "bar": 2}'], ['{"bar": 2}']);
    await check({ dependentSchemas: { bar: { properties: { foo: { type: 'integer' } }, required: ['foo'] } } }, ['{"foo": "x"}', '{"foo": 1, "bar": 2}', '1'], ['{"bar": 1}', '{"foo": "x", "bar": 1}']);
    await check({ allOf: [{ if: { exclusiveMaximum: 0 } }, { then: { minimum: -10 } }, { else: { multipleOf: 2 } }] }, ['-100', '3'], []);
  });

  test('not of more than types, through its negation', async () => {
    await check({ not: { type: 'object', properties: { foo: { type: 'string' } } } }, ['1', '{"foo": 1}'], ['{}', '{"foo": "a"}']);
    await check({ not: { type: 'integer' } }, ['"a"', 'null'], ['1', '-3']);
    await check({ type: 'integer', multipleOf: 2, minimum: 0 }, ['0', '4'], ['-2', '3']);
  });

  test('refuses what it cannot enforce, naming the keyword', () => {
    refused({ type: 'array', items: { type: 'integer' }, uniqueItems: true }, 'uniqueItems');
    refused({ type: 'array', contains: { type: 'string', pattern: '^a' }, maxContains: 1 }, 'maxContains');
    refused({ type: 'array', contains: { type: 'integer' }, minItems: 2 }, 'contains');
    refused({ not: { type: 'string', pattern: '^a' } }, 'not');
    refused({ allOf: [{ contains: { const: 1 } }, { contains: { const: 2 } }] }, 'allOf');
    refused({ type: 'string', pattern: '(?=a)b' }, 'pattern');
    refused({ type: 'string', pattern: 'a', maxLength: 3 }, 'pattern');
    refused({ type: 'object', maxLenght: 3 }, 'maxLenght');
    assert.throws(() => schemaToGbnf({ $ref: 'https://example.com/s.json' }, 'p'), /outside the schema/);
    assert.throws(() => schemaToGbnf({ type: 'string', format: 'credit-card' }, 'p'), /format/);
    assert.throws(() => schemaToGbnf(false, 'p'), /no value/);
  });
});
