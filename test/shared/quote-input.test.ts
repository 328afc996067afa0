import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { quoteInput, truncateInput } from '../../src/shared/quote-input.ts';

test('user input in messages is truncated, never split inside a surrogate pair', () => {
  assert.equal(truncateInput('short'), 'short');
  const long = truncateInput('x'.repeat(1_000_000));
  assert.ok(long.length < 130);
  assert.match(long, /… \(1000000 characters\)$/);
  const emoji = truncateInput('a' + '😀'.repeat(100), 100);
  assert.ok(!/[\uD800-\uDBFF]…/.test(emoji), 'no lone high surrogate before the ellipsis');
  assert.equal(quoteInput('m'), '"m"');
  assert.equal(quoteInput({ a: 1 }), 'an object');
  assert.equal(quoteInput([1]), 'an array');
  assert.equal(quoteInput(null), 'null');
  assert.equal(quoteInput(3), '3');
});

test('every ApiError message and param is bounded, whoever built it', () => {
  const error = ApiError.invalidRequest(`bad ${'z'.repeat(100_000)}`, 'p'.repeat(100_000));
  assert.ok(error.message.length <= 1100);
  assert.ok(error.param!.length <= 400);
});
