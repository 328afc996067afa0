/**
 * The JSON Schema → grammar-schema checker: what real clients send is accepted, what the
 * grammar cannot enforce is a 400 naming the keyword and where, and — on real llama.cpp with
 * the tiny fixture — whatever the grammar lets the model write validates against the client's
 * original schema (checked with zod's own JSON Schema reader, not with our converter).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LlamaChat, resolveChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { z } from 'zod';
import { toGrammarSchema, type GrammarSchema } from '../../src/inference/grammar-schema.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { disposeTinyLlama, loadTinyLlama } from '../helpers/tiny-llama.ts';

const PARAM = 'response_format.json_schema.schema';

function refused(schema: unknown, keyword: string, pointer: string): void {
  assert.throws(() => toGrammarSchema(schema, PARAM), (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'unsupported_schema');
    assert.equal(error.param, PARAM);
    assert.ok(error.message.includes(keyword), `message names '${keyword}': ${error.message}`);
    assert.ok(error.message.includes(`at ${pointer}`), `message says where (${pointer}): ${error.message}`);
    return true;
  });
}

/** A schema like the ones LangChain and the AI SDK send (zod 4's toJSONSchema), nothing unsupported in it. */
const person = z.object({
  name: z.string().max(12).describe('full name'),
  age: z.int(),
  score: z.number(),
  nickname: z.string().max(8).optional(),
  email: z.string().max(20).nullable(),
  tags: z.array(z.enum(['a', 'b', 'c'])).max(3),
  kind: z.literal('person'),
  both: z.union([z.boolean(), z.number()]),
  address: z.object({ city: z.string().max(10), zip: z.string().max(5) }),
  pair: z.tuple([z.string().max(3), z.boolean()]),
  extra: z.record(z.string(), z.boolean()),
  anything: z.unknown(),
});

describe('toGrammarSchema: accepted schemas', () => {
  it("takes zod 4's toJSONSchema output (draft 2020-12 and draft-07) with every annotation", () => {
    for (const target of ['draft-2020-12', 'draft-7'] as const) {
      const json = z.toJSONSchema(person, { target });
      const schema = toGrammarSchema(json, PARAM) as Record<string, unknown>;
      assert.equal(schema.type, 'object');
      assert.ok(!('$schema' in schema), 'annotations are dropped');
      const props = schema.properties as Record<string, Record<string, unknown>>;
      assert.deepEqual(Object.keys(props), Object.keys(person.shape));
      assert.equal(props.name!.description, 'full name', 'descriptions are kept for the prompt');
      // nullable → one alternative per type (node-llama-cpp applies maxLength to a single type only)
      assert.deepEqual(props.email, { oneOf: [{ type: 'string', maxLength: 20 }, { type: 'null' }] });
      // draft-07 tuples and 2020-12 prefixItems come out the same
      assert.deepEqual(props.pair, { type: 'array', prefixItems: [{ type: 'string', maxLength: 3 }, { type: 'boolean' }], minItems: 2, maxItems: 2 });
      assert.deepEqual(props.extra, { type: 'object', properties: {}, additionalProperties: { type: 'boolean' } });
      assert.ok(Array.isArray((props.anything as { oneOf?: unknown[] }).oneOf), 'an empty schema allows any JSON value');
    }
  });

  it('resolves $defs, draft-07 definitions, and recursive references to the root', () => {
    const shared = z.object({ x: z.string().max(4) }).meta({ id: 'Shared' });
    const withDefs = toGrammarSchema(z.toJSONSchema(z.object({ a: shared, b: shared })), PARAM) as Record<string, unknown>;
    assert.deepEqual((withDefs.properties as Record<string, unknown>).a, { $ref: '#/$defs/Shared' });
    assert.ok('Shared' in (withDefs.$defs as object));

    const draft7 = toGrammarSchema({ type: 'object', properties: { a: { $ref: '#/definitions/S' } }, definitions: { S: { type: 'string' } } }, PARAM) as Record<string, unknown>;
    assert.deepEqual(draft7.$defs, { S: { type: 'string' } });

    const tree = toGrammarSchema({ type: 'object', properties: { v: { type: 'integer' }, children: { type: 'array', items: { $ref: '#' }, maxItems: 2 } } }, PARAM) as Record<string, unknown>;
    const defs = tree.$defs as Record<string, Record<string, unknown>>;
    assert.equal(Object.keys(defs).length, 1);
    assert.equal(defs.def0!.type, 'object');
  });

  it("keeps the client's property and definition names as own properties, whatever they are", () => {
    const schema = toGrammarSchema({ type: 'object', properties: { constructor: { $ref: '#/$defs/constructor' }, toString: { type: 'null' } }, $defs: { constructor: { type: 'boolean' } } }, PARAM) as Record<string, unknown>;
    const props = schema.properties as Record<string, unknown>;
    assert.deepEqual(Object.keys(props), ['constructor', 'toString']);
    assert.deepEqual(props.constructor, { $ref: '#/$defs/def0' }, "a definition named after Object.prototype's keys is renamed");
    assert.deepEqual(schema.$defs, { def0: { type: 'boolean' } });
  });

  it('turns anyOf into oneOf, infers a missing type, and reads OpenAI strict-mode schemas', () => {
    assert.deepEqual(toGrammarSchema({ anyOf: [{ type: 'string' }, { type: 'null' }], title: 'x', default: null }, PARAM), { oneOf: [{ type: 'string' }, { type: 'null' }] });
    assert.deepEqual(toGrammarSchema({ properties: { a: { type: 'boolean' } }, required: ['a'] }, PARAM), { type: 'object', properties: { a: { type: 'boolean' } } });
    const strict = {
      type: 'object',
      properties: { city: { type: 'string', description: 'City' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    };
    const schema = toGrammarSchema(strict, PARAM) as { properties: Record<string, unknown> };
    assert.deepEqual(schema.properties.unit, { enum: ['c', 'f', null] });
  });

  it('requires an object for tool parameters', () => {
    assert.throws(() => toGrammarSchema({ type: 'string' }, 'tools[0].function.parameters', { rootObject: true }), (error: unknown) =>
      error instanceof ApiError && error.param === 'tools[0].function.parameters' && /must describe an object/.test(error.message));
  });
});

describe('toGrammarSchema: refused schemas name the keyword and where', () => {
  it('refuses constraints the grammar cannot enforce', () => {
    refused({ type: 'object', properties: { e: { type: 'string', pattern: '^a' } } }, "'pattern'", '/properties/e');
    refused({ type: 'object', properties: { e: { type: 'string', format: 'email' } } }, '"email"', '/properties/e/format');
    refused({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } } }, "'minimum'", '/properties/n');
    refused({ type: 'number', multipleOf: 2 }, "'multipleOf'", 'the root');
    refused({ type: 'array', items: { type: 'string' }, uniqueItems: true }, "'uniqueItems'", 'the root');
    refused({ allOf: [{ type: 'object' }, { type: 'object' }] }, "'allOf'", 'the root');
    refused({ type: 'object', properties: { a: { not: { type: 'null' } } } }, "'not'", '/properties/a');
    refused({ type: 'object', patternProperties: { '^x': { type: 'string' } } }, "'patternProperties'", 'the root');
    refused({ if: { type: 'string' }, then: { maxLength: 2 } }, "'if'", 'the root');
  });

  it('refuses keywords it does not know (a typo, a newer draft) instead of ignoring them', () => {
    refused({ type: 'object', properties: { s: { type: 'string', maxLenght: 3 } } }, "'maxLenght'", '/properties/s');
    refused({ type: 'array', items: { type: 'string' }, contentSchema: {} }, "'contentSchema'", 'the root');
    refused({ type: 'object', properties: { a: { type: 'integer', exclusiveMinimum: 0 } } }, "'exclusiveMinimum'", '/properties/a');
    refused({ type: 'array', items: { type: 'integer' }, unevaluatedItems: false }, "'unevaluatedItems'", 'the root');
    refused({ type: 'object', properties: { a: { type: 'string', dependentRequired: {} } } }, "'dependentRequired'", '/properties/a');
    // A keyword beside enum/const would rule literals out, which the grammar writes as given.
    refused({ enum: ['a', 'bbb'], maxLength: 1 }, "'maxLength'", 'the root');
    refused({ const: 'a', enum: ['a', 'b'] }, "'enum'", 'the root');
    // $id below the root would change what '#/…' means there.
    refused({ type: 'object', properties: { a: { $id: 'https://example.com/a', type: 'string' } } }, "'$id'", '/properties/a');
  });

  it('accepts annotations and x- vendor extensions, and drops them', () => {
    const schema = {
      $id: 'https://example.com/root', $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'T', $comment: 'c',
      type: 'object', 'x-order': 1, discriminator: { propertyName: 'k' },
      properties: { k: { type: 'string', enum: ['a'], examples: ['a'], default: 'a', deprecated: true, readOnly: true, 'x-go-name': 'K' } },
    };
    assert.deepEqual(toGrammarSchema(schema, PARAM), { type: 'object', properties: { k: { enum: ['a'] } } });
  });

  it('refuses what no value could satisfy the way the grammar writes it', () => {
    refused({ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, '"b"', '/required');
    refused({ type: 'object', properties: { a: false } }, 'false', '/properties/a');
    refused({ enum: [{ a: 1 }] }, 'enum', '/enum/0');
    refused({ type: 'string', enum: ['a', 1] }, 'enum', '/enum/1');
    refused(false, 'false', 'the root');
    // Every listed property is written: fewer than minProperties (none may be added) or more than maxProperties.
    refused({ type: 'object', properties: { a: { type: 'string' } }, minProperties: 2 }, "'minProperties'", 'the root');
    refused({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, maxProperties: 1 }, "'maxProperties'", 'the root');
  });

  it('refuses references it cannot follow', () => {
    refused({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, 'https://example.com/s.json', '/properties/a/$ref');
    refused({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, 'points to nothing', '/properties/a/$ref');
    refused({ type: 'object', properties: { a: { $ref: '#/$defs/S', maxLength: 3 } }, $defs: { S: { type: 'string' } } }, "'maxLength'", '/properties/a');
  });

  it('refuses references that lead back to themselves before any bracket (left recursion), and keeps recursion through objects and arrays', () => {
    refused({ type: 'object', properties: { a: { $ref: '#/properties/a' } } }, 'leads back to itself', '/properties/a/$ref');
    refused({ type: 'object', properties: { x: { $ref: '#/$defs/A' } }, $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } } }, 'leads back to itself', '/$defs/B/$ref');
    refused({ type: 'object', properties: { x: { $ref: '#/$defs/A' } }, $defs: { A: { anyOf: [{ $ref: '#/$defs/A' }, { type: 'string' }] } } }, 'leads back to itself', '/$defs/A/anyOf/0/$ref');
    const list = { type: 'object', properties: { next: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } }, $defs: { Node: { type: 'object', properties: { v: { type: 'integer' }, next: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } } } } };
    assert.doesNotThrow(() => toGrammarSchema(list, PARAM));
  });

  it('refuses a schema nested deeper than 64 levels with a 400, not a stack overflow', () => {
    let deep: unknown = { type: 'string' };
    for (let i = 0; i < 2000; i++) deep = { type: 'array', items: deep };
    refused(deep, 'deeper than 64', '/items');
  });
});

/**
 * Generates with the grammar on real llama.cpp and validates against the ORIGINAL schema: the
 * random-weight model writes garbage wherever it may, so anything the grammar lets through shows.
 */
function sharedDefs(): Record<string, unknown> {
  const shared = z.object({ x: z.boolean() }).meta({ id: 'S' });
  return z.toJSONSchema(z.object({ a: shared, b: z.array(shared).max(2) }));
}

describe('grammar output validates against the original schema', () => {
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext;
  before(async () => {
    ({ llama, model, context } = await loadTinyLlama(2048));
  });
  after(() => disposeTinyLlama({ llama, model, context }));

  // node-llama-cpp's format grammars fix the shape of a date (month 01–12, day 01–31) but not the
  // calendar (11-31 can come out), documented in docs/runtime.md; so formats are checked by shape.
  const DATE = '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])';
  const TIME = '([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{3})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)';
  const formats = { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, day: { type: 'string', format: 'date' }, time: { type: 'string', format: 'time' } } };
  const formatShapes = {
    type: 'object',
    properties: { at: { type: 'string', pattern: `^${DATE}T${TIME}$` }, day: { type: 'string', pattern: `^${DATE}$` }, time: { type: 'string', pattern: `^${TIME}$` } },
    required: ['at', 'day', 'time'],
    additionalProperties: false,
  };

  const cases: [string, Record<string, unknown>, Record<string, unknown>?][] = [
    ['string formats (by shape)', formats, formatShapes],
    ['zod person (2020-12)', z.toJSONSchema(person)],
    ['zod person (draft-07)', z.toJSONSchema(person, { target: 'draft-7' })],
    ['recursive tree', { type: 'object', properties: { v: { type: 'boolean' }, children: { type: 'array', items: { $ref: '#' }, maxItems: 2 } }, required: ['v', 'children'], additionalProperties: false }],
    ['shared $defs', sharedDefs()],
    ['root union', { anyOf: [{ type: 'object', properties: { ok: { const: true } }, required: ['ok'] }, { type: 'array', items: { type: 'integer' }, maxItems: 3 }] }],
  ];
  for (const [name, schema, check = schema] of cases) {
    it(name, async () => {
      const validator = z.fromJSONSchema(check as Parameters<typeof z.fromJSONSchema>[0]);
      const grammar = await llama.createGrammarForJsonSchema<GrammarSchema>(toGrammarSchema(schema, PARAM));
      for (const seed of [1, 2, 3]) {
        const sequence = context.getSequence();
        const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: resolveChatWrapper(model), autoDisposeSequence: true });
        try {
          const { response, metadata } = await chat.generateResponse([{ type: 'user', text: 'json' }, { type: 'model', response: [] }], {
            grammar, maxTokens: 600, temperature: 1, seed,
          });
          assert.notEqual(metadata.stopReason, 'maxTokens', `seed ${seed}: the reply ended within 600 tokens`);
          const parsed = validator.safeParse(JSON.parse(response));
          assert.ok(parsed.success, `seed ${seed}: ${response}\n${parsed.error?.message}`);
        } finally {
          chat.dispose();
        }
      }
    });
  }
});
