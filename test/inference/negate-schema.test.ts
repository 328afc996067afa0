/**
 * negateSchema: the values of its result are never values of the schema (checked over a pool of
 * values with the small reference validator below), all of them where the negation is exact, and
 * undefined where nothing useful can be written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { negateSchema } from '../../src/inference/negate-schema.ts';

const POOL: unknown[] = [
  null, true, false, 0, -0.5, 1, 1.5, 2, 4, 5, 10, -11, '', 'a', 'abc', 'abcdef',
  [], [1], [1, 2], ['a', 1], {}, { foo: 1 }, { foo: 'x' }, { bar: 2 }, { foo: 1, bar: 2 },
];

/** JSON equality as JSON Schema has it (1 and 1.0 equal; keys in any order). */
const equal = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
};
const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * A reference validator for the keywords these tests use, written from JSON Schema 2020-12 and
 * independent of negate-schema.ts (svc's zod reader applies numeric keywords to every type).
 */
function valid(schema: unknown, v: unknown): boolean {
  if (typeof schema === 'boolean') return schema;
  const s = schema as Record<string, unknown>;
  const num = typeof v === 'number';
  const checks: Record<string, (x: never) => boolean> = {
    type: (t: string | string[]) => (Array.isArray(t) ? t : [t]).some((n) => n === kind(v) || (n === 'integer' && Number.isInteger(v))),
    minimum: (m: number) => !num || v >= m,
    maximum: (m: number) => !num || v <= m,
    exclusiveMinimum: (m: number) => !num || v > m,
    exclusiveMaximum: (m: number) => !num || v < m,
    minLength: (n: number) => typeof v !== 'string' || [...v].length >= n,
    maxLength: (n: number) => typeof v !== 'string' || [...v].length <= n,
    minItems: (n: number) => !Array.isArray(v) || v.length >= n,
    maxItems: (n: number) => !Array.isArray(v) || v.length <= n,
    minProperties: (n: number) => kind(v) !== 'object' || Object.keys(v as object).length >= n,
    maxProperties: (n: number) => kind(v) !== 'object' || Object.keys(v as object).length <= n,
    required: (names: string[]) => kind(v) !== 'object' || names.every((n) => Object.hasOwn(v as object, n)),
    properties: (p: Record<string, unknown>) => kind(v) !== 'object' || Object.entries(p).every(([n, sub]) => !Object.hasOwn(v as object, n) || valid(sub, (v as Record<string, unknown>)[n])),
    items: (sub: unknown) => !Array.isArray(v) || v.every((x) => valid(sub, x)),
    contains: (sub: unknown) => !Array.isArray(v) || v.some((x) => valid(sub, x)),
    const: (c: unknown) => equal(v, c),
    enum: (e: unknown[]) => e.some((c) => equal(v, c)),
    anyOf: (a: unknown[]) => a.some((x) => valid(x, v)),
    allOf: (a: unknown[]) => a.every((x) => valid(x, v)),
    not: (x: unknown) => !valid(x, v),
  };
  return Object.entries(s).every(([k, value]) => {
    const check = checks[k];
    if (check === undefined) throw new Error(`the test validator does not know '${k}'`);
    return check(value as never);
  });
}

/** Every pool value: never in both; in exactly one of them when `exact`. */
function checkNegation(schema: unknown, exact: boolean): void {
  const not = negateSchema(schema);
  assert.notEqual(not, undefined, `${JSON.stringify(schema)} should have a negation`);
  for (const value of POOL) {
    const a = valid(schema, value);
    const b = valid(not, value);
    assert.ok(!(a && b), `${JSON.stringify(value)} is valid for ${JSON.stringify(schema)} and for its negation ${JSON.stringify(not)}`);
    if (exact) assert.ok(a || b, `${JSON.stringify(value)} is valid for neither ${JSON.stringify(schema)} nor ${JSON.stringify(not)}`);
  }
}

describe('negateSchema', () => {
  test('keyword by keyword, each on its own kind of value', () => {
    for (const schema of [
      { minimum: 5 }, { exclusiveMaximum: 0 }, { maxLength: 2 }, { minLength: 1 }, { minItems: 1 }, { maxItems: 1 },
      { type: 'string' }, { type: ['null', 'array'] }, { type: 'number', minimum: 1, maximum: 4 },
      { required: ['foo'] }, { required: ['foo', 'bar'] }, { minProperties: 1 }, { properties: { foo: { type: 'integer' } } },
      { type: 'object', properties: { foo: { type: 'string' } } }, { const: 1 }, { enum: [1, 4, null] }, { enum: [true] },
      { anyOf: [{ type: 'string' }, { minimum: 2 }] }, { allOf: [{ type: 'number' }, { maximum: 3 }] }, { not: { type: 'null' } },
      true, false, {},
    ]) checkNegation(schema, true);
  });

  test('a subset where the whole negation cannot be written, never a value the schema allows', () => {
    // Numbers that are not integers, strings other than a given one, are left out.
    for (const schema of [{ type: 'integer' }, { const: 'a' }, { enum: ['a', 1] }, { const: { foo: 1 } }]) checkNegation(schema, false);
    assert.deepEqual(negateSchema({ type: 'integer' }), { type: ['null', 'boolean', 'object', 'array', 'string'] });
  });

  test('undefined where no useful negation is written', () => {
    for (const schema of [{ pattern: '^a' }, { $ref: '#/$defs/x' }, { oneOf: [{ type: 'string' }] }, { format: 'date' }, { prefixItems: [true], items: false }, { multipleOf: 2 }]) {
      assert.equal(negateSchema(schema), undefined, JSON.stringify(schema));
    }
  });

  test('items and contains negate into each other', () => {
    assert.deepEqual(negateSchema({ items: { type: 'string' } }), { type: 'array', contains: { type: ['null', 'boolean', 'object', 'array', 'number'] } });
    assert.deepEqual(negateSchema({ contains: { const: 1 } }), { type: 'array', items: { anyOf: [{ type: ['null', 'boolean', 'object', 'array', 'string'] }, { type: 'number', exclusiveMaximum: 1 }, { type: 'number', exclusiveMinimum: 1 }] } });
    assert.equal(negateSchema({ contains: { const: 1 }, maxContains: 2 }), undefined);
  });
});
