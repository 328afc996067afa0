import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { chatCompletionRequestSchema, embeddingRequestSchema } from '../../src/openai/openai-schemas.ts';
import { intakeOpenAIBody } from '../../src/openai/openai-intake.ts';
import { requestBody } from '../../src/openai/request-body.ts';
import { ValidatedBody } from '../../src/http/validated-body.ts';

test('a body validated on the worker is used as is only for the schema it was validated with', () => {
  const chat = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
  const validated = intakeOpenAIBody(Buffer.from(JSON.stringify(chat)), '/v1/chat/completions', {});
  assert.ok('validated' in validated);
  const body = new ValidatedBody(validated.validated, '/v1/chat/completions');
  assert.equal(requestBody(chatCompletionRequestSchema, body), validated.validated);
  // Another route's schema validates again (and refuses what does not fit it).
  assert.throws(() => requestBody(embeddingRequestSchema, body), (error: unknown) => error instanceof ApiError && error.status === 400);
  // Other routes get the body parsed (the event loop never parses a large body); plain bodies are validated as before.
  assert.deepEqual(intakeOpenAIBody(Buffer.from('{"a":1}'), '/api/other', {}), { parsed: { a: 1 } });
  assert.throws(() => intakeOpenAIBody(Buffer.from('{"__proto__":{"x":1}}'), '/api/other', {}), (error: unknown) => error instanceof ApiError && error.code === 'invalid_json');
  assert.deepEqual(requestBody(chatCompletionRequestSchema, chat).messages, chat.messages);
  assert.throws(() => intakeOpenAIBody(Buffer.from('{"model":1}'), '/v1/embeddings', {}), (error: unknown) => error instanceof ApiError && error.param === 'model');
});
