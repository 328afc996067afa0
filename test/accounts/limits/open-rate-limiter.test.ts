import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import { openRateLimiter } from '../../../src/accounts/limits/open-rate-limiter.ts';
import { RedisRateLimiter } from '../../../src/accounts/limits/redis-rate-limiter.ts';
import { redisUnavailable, TEST_REDIS_URL as REDIS_URL } from '../../helpers/test-services.ts';

const NO_REDIS = await redisUnavailable('the openRateLimiter test with a Redis URL');

describe('openRateLimiter', () => {
  it('is in-process without a Redis URL, with the limits given', async () => {
    const l = await openRateLimiter({ limits: { key: { requests_per_second: 0.01, burst: 1 } } });
    assert.ok(l instanceof MemoryRateLimiter);
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, true);
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, false);
    await l.close();
  });

  it('is Redis-backed with a Redis URL', { skip: NO_REDIS }, async () => {
    const l = await openRateLimiter({ redisUrl: REDIS_URL, keyPrefix: `svc-test:rl-open:${process.pid}:${Date.now()}:` });
    try {
      assert.ok(l instanceof RedisRateLimiter);
      const d = await l.take({ keyId: 'k', queueClass: 'deep' });
      assert.equal(d.allowed, true);
      assert.equal(d.degraded, false);
    } finally {
      await l.close();
    }
  });

  it('throws on bad limits or URL instead of starting unprotected', async () => {
    await assert.rejects(openRateLimiter({ limits: { queue_classes: { deep: { requests_per_second: 1, burst: -1 } } } }), /burst/);
    await assert.rejects(openRateLimiter({ redisUrl: 'ftp://x' }), /redis:\/\//);
  });
});
