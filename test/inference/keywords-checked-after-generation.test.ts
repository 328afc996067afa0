import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keywordsCheckedAfterGeneration } from '../../src/inference/keywords-checked-after-generation.ts';

describe('keywordsCheckedAfterGeneration', () => {
  it('lists where the schema uses keywords the grammar does not fully enforce', () => {
    const schema = {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date' },
        n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        pick: { oneOf: [{ type: 'number' }, {}] },
        format: { type: 'string' },
        list: { type: 'array', items: { $ref: '#/$defs/T' } },
      },
      $defs: { T: { type: 'string', format: 'date-time' } },
    };
    assert.deepEqual(keywordsCheckedAfterGeneration(schema), [
      { keyword: 'format', pointer: '/properties/when' },
      { keyword: 'minimum', pointer: '/properties/n' },
      { keyword: 'maximum', pointer: '/properties/n' },
      { keyword: 'oneOf', pointer: '/properties/pick' },
      { keyword: 'format', pointer: '/$defs/T' },
    ]);
  });

  it('is empty when the grammar alone guarantees a valid reply', () => {
    // A property named 'format', an enum value 'oneOf' and a single-alternative oneOf are not the keywords.
    assert.deepEqual(keywordsCheckedAfterGeneration({
      type: 'object', properties: { format: { enum: ['oneOf', 'format'] }, one: { oneOf: [{ type: 'string' }] } },
    }), []);
    assert.deepEqual(keywordsCheckedAfterGeneration(true), []);
  });
});
