/**
 * conditionsAsAlternatives: if/then/else and the dependencies as one `anyOf` of their
 * combinations (the grammar side is in schema-gbnf-writer.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConditionRefusedError, conditionsAsAlternatives } from '../../src/inference/conditional-schemas.ts';

describe('conditionsAsAlternatives', () => {
  test('if/then/else: (I ∧ T) ∨ (¬I ∧ E), T ∨ ¬I, I ∨ E', () => {
    assert.deepEqual(conditionsAsAlternatives({ type: 'number', if: { minimum: 0 }, then: { maximum: 5 }, else: { minimum: -5 } }), {
      type: 'number',
      anyOf: [{ allOf: [{ minimum: 0 }, { maximum: 5 }] }, { allOf: [{ type: 'number', exclusiveMaximum: 0 }, { minimum: -5 }] }],
    });
    assert.deepEqual(conditionsAsAlternatives({ if: { minimum: 0 }, then: { maximum: 5 } }), { anyOf: [{ maximum: 5 }, { type: 'number', exclusiveMaximum: 0 }] });
    assert.deepEqual(conditionsAsAlternatives({ if: { type: 'string' }, else: { type: 'null' } }), { anyOf: [{ type: 'string' }, { type: 'null' }] });
  });

  test('an if whose negation is not written: a subset that satisfies whichever branch is taken', () => {
    assert.deepEqual(conditionsAsAlternatives({ if: { pattern: 'a' }, then: { maxLength: 3 } }), { anyOf: [{ maxLength: 3 }] });
    assert.deepEqual(conditionsAsAlternatives({ if: { pattern: 'a' }, then: { maxLength: 3 }, else: { minLength: 1 } }), {
      anyOf: [{ allOf: [{ pattern: 'a' }, { maxLength: 3 }] }, { allOf: [{ maxLength: 3 }, { minLength: 1 }] }],
    });
  });

  test('dependencies multiply with each other and with an anyOf beside them', () => {
    const out = conditionsAsAlternatives({ dependentRequired: { a: ['b'], c: [] }, dependentSchemas: { d: { minProperties: 3 } }, anyOf: [{ required: ['x'] }, { required: ['y'] }] });
    assert.equal((out.anyOf as unknown[]).length, 2 * 2 * 2);
    assert.deepEqual((out.anyOf as unknown[])[0], { allOf: [{ properties: { a: false } }, { properties: { d: false } }, { required: ['x'] }] });
    assert.deepEqual(conditionsAsAlternatives({ dependencies: { a: ['b'], e: true } }), { anyOf: [{ properties: { a: false } }, { required: ['b'] }] });
  });

  test('refuses malformed values and too many combinations', () => {
    assert.throws(() => conditionsAsAlternatives({ dependentRequired: { a: 'b' } }), ConditionRefusedError);
    const many = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`p${i}`, ['q']]));
    assert.throws(() => conditionsAsAlternatives({ dependentRequired: many }), (e: unknown) => e instanceof ConditionRefusedError && e.keyword === 'dependentRequired');
  });
});
