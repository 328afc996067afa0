import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rateLimitHeaders, rateLimitRefusal, upstreamUnavailableHeaders } from '../../../src/accounts/limits/rate-limit-headers.ts';
import { RateLimitedError } from '../../../src/accounts/limits/rate-limited-error.ts';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import type { RefusedDecision } from '../../../src/accounts/limits/rate-limiter.ts';

const keyRefusal: RefusedDecision = { allowed: false, queueClass: 'interactive', backpressure: 'normal', degraded: false, retryAfterSeconds: 3, limit: 'key' };
const classRefusal: RefusedDecision = { allowed: false, queueClass: 'deep', backpressure: 'saturated', degraded: false, retryAfterSeconds: 1, limit: 'queue_class' };

describe('rate-limit headers', () => {
  it('an admitted request carries the class and backpressure, no Retry-After', () => {
    assert.deepEqual(rateLimitHeaders({ allowed: true, queueClass: 'enterprise', backpressure: 'elevated', degraded: false }), {
      'x-svc-queue-class': 'enterprise',
      'x-svc-backpressure-state': 'elevated',
    });
  });

  it('a refusal is a 429 rate_limit_error with Retry-After equal to retry_after_seconds', () => {
    const r = rateLimitRefusal(keyRefusal);
    assert.equal(r.status, 429);
    assert.equal(r.type, 'rate_limit_error');
    assert.equal(r.code, 'rate_limit_exceeded');
    assert.deepEqual(r.headers, { 'x-svc-queue-class': 'interactive', 'x-svc-backpressure-state': 'normal', 'retry-after': '3' });
    assert.deepEqual(r.bodyExtras, { retry_after_seconds: 3 });
    assert.match(r.message, /API key.*retry after 3 seconds/);

    const c = rateLimitRefusal(classRefusal);
    assert.equal(c.code, 'queue_class_busy');
    assert.equal(c.headers['x-svc-backpressure-state'], 'saturated');
    assert.match(c.message, /deep queue class.*retry after 1 second\./);
  });

  it('RateLimitedError carries the same status, headers and extras for the hosted error handler', async () => {
    const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.5, burst: 1 } } });
    await limiter.take({ keyId: 'k', queueClass: 'interactive' }, 0);
    const d = await limiter.take({ keyId: 'k', queueClass: 'interactive' }, 0);
    assert.equal(d.allowed, false);
    if (d.allowed) return;
    const e = new RateLimitedError(d);
    assert.equal(e.status, 429);
    assert.equal(e.type, 'rate_limit_error');
    assert.equal(e.retryAfterSeconds, 2);
    assert.equal(e.isRetryable, true);
    assert.deepEqual(e.bodyExtras, { retry_after_seconds: 2 });
    assert.equal(e.headers['retry-after'], '2');
    assert.equal(e.headers['x-svc-queue-class'], 'interactive');
  });

  it('server_error (upstream unavailable) gets the same three headers, Retry-After 1 s unless the error says more', () => {
    assert.deepEqual(upstreamUnavailableHeaders({ queueClass: 'deep', backpressure: 'normal' }), {
      'retry-after': '1', 'x-svc-queue-class': 'deep', 'x-svc-backpressure-state': 'normal',
    });
    assert.equal(upstreamUnavailableHeaders({ queueClass: 'deep', backpressure: 'degraded', retryAfterSeconds: 4.2 })['retry-after'], '5');
    assert.equal(upstreamUnavailableHeaders({ queueClass: 'deep', backpressure: 'normal', retryAfterSeconds: Number.NaN })['retry-after'], '1');
    assert.equal(upstreamUnavailableHeaders({ queueClass: 'deep', backpressure: 'normal', retryAfterSeconds: 0 })['retry-after'], '1');
  });
});
