/**
 * `/openai-tools`' portable parameters: value bounds move into descriptions, and only keywords
 * move — properties that happen to be named like a keyword (`pattern`, `minimum`) stay.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openAITools, portableSchema } from '../../src/mcp/openai-tools.ts';

test('bounds become description text; same-named properties and other keywords stay', () => {
  const schema = {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, pattern: '^[a-z]+$' },
      minimum: { type: 'integer', description: 'how few', minimum: 1, maximum: 9 },
      list: { type: 'array', maxItems: 3, items: { anyOf: [{ type: 'number', exclusiveMinimum: 0 }, { type: 'null' }] } },
    },
    required: ['pattern'],
    additionalProperties: false,
  };
  assert.deepEqual(portableSchema(schema), {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, description: 'matching /^[a-z]+$/' },
      minimum: { type: 'integer', description: 'how few; at least 1, at most 9' },
      list: { type: 'array', maxItems: 3, items: { anyOf: [{ type: 'number', description: 'more than 0' }, { type: 'null' }] } },
    },
    required: ['pattern'],
    additionalProperties: false,
  });
});

test('every tool is a function with an object of parameters and no $schema', () => {
  for (const tool of openAITools().tools) {
    assert.equal(tool.type, 'function');
    assert.match(tool.function.name, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(tool.function.parameters.type, 'object');
    assert.equal(tool.function.parameters.$schema, undefined);
  }
});
