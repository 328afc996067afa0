import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { anthropicErrorBody, anthropicStatus } from '../../src/anthropic/anthropic-errors.ts';
import { MessagesStream } from '../../src/anthropic/messages-stream.ts';

test("each status gets Anthropic's error type; svc's 503 is answered as 529 overloaded_error", () => {
  const cases: [ApiError, number, string][] = [
    [ApiError.invalidRequest('bad'), 400, 'invalid_request_error'],
    [new ApiError({ status: 401, type: 'authentication_error', code: 'developer_key_required', message: 'key' }), 401, 'authentication_error'],
    [new ApiError({ status: 403, type: 'permission_error', code: 'forbidden_host', message: 'host' }), 403, 'permission_error'],
    [ApiError.notFound('no model', 'model_not_found'), 404, 'not_found_error'],
    [ApiError.tooLarge('big'), 413, 'request_too_large'],
    [new ApiError({ status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: 'json' }), 415, 'invalid_request_error'],
    [ApiError.busy('slow down', 1, 429), 429, 'rate_limit_error'],
    [ApiError.internal(new Error('secret detail')), 500, 'api_error'],
    [new ApiError({ status: 502, type: 'server_error', code: 'upstream_error', message: 'up' }), 502, 'api_error'],
    [new ApiError({ status: 504, type: 'server_error', code: 'upstream_timeout', message: 'slow' }), 504, 'timeout_error'],
    [ApiError.busy('queue full', 1), 529, 'overloaded_error'],
  ];
  for (const [error, status, type] of cases) {
    assert.equal(anthropicStatus(error), status);
    assert.deepEqual(anthropicErrorBody(error), { type: 'error', error: { type, message: error.message } });
  }
  assert.equal(anthropicErrorBody(ApiError.internal(new Error('secret detail'))).error.message, 'Internal server error.');
});

test('an error once the stream is open is one `error` event in the envelope', () => {
  const events = new MessagesStream('msg_1', 'm', 4).error(ApiError.busy('The daemon is shutting down.', 1)).events;
  assert.deepEqual(events, [{ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'The daemon is shutting down.' } } }]);
});
