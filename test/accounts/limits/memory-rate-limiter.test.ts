import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import type { LimitDecision } from '../../../src/accounts/limits/rate-limiter.ts';
import type { LimitsInput } from '../../../src/accounts/limits/limits-config.ts';

const wide = { requests_per_second: 1_000_000, burst: 1_000_000 };

function limiter(limits: LimitsInput, maxKeys?: number): MemoryRateLimiter {
  return new MemoryRateLimiter({ limits, maxKeys });
}

function refused(d: LimitDecision): Extract<LimitDecision, { allowed: false }> {
  assert.equal(d.allowed, false, 'expected a refusal');
  return d as Extract<LimitDecision, { allowed: false }>;
}

describe('MemoryRateLimiter', () => {
  it('admits the burst, then refuses with the whole seconds until the next slot', async () => {
    // One request every 5 s, bursts of 3.
    const l = limiter({ key: { requests_per_second: 0.2, burst: 3 }, queue_classes: { interactive: wide } });
    for (let i = 0; i < 3; i++) assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' }, 0)).allowed, true);
    const r = refused(await l.take({ keyId: 'k', queueClass: 'interactive' }, 0));
    assert.equal(r.limit, 'key');
    assert.equal(r.retryAfterSeconds, 5);
    // 1.5 s later the wait is 3.5 s, rounded up.
    assert.equal(refused(await l.take({ keyId: 'k', queueClass: 'interactive' }, 1500)).retryAfterSeconds, 4);
    // A sub-second wait is still at least 1.
    assert.equal(refused(await l.take({ keyId: 'k', queueClass: 'interactive' }, 4999.5)).retryAfterSeconds, 1);
  });

  it('refills one request per interval, and a full burst after idling', async () => {
    const l = limiter({ key: { requests_per_second: 1, burst: 2 }, queue_classes: { interactive: wide } });
    const k = { keyId: 'k', queueClass: 'interactive' } as const;
    assert.equal((await l.take(k, 0)).allowed, true);
    assert.equal((await l.take(k, 0)).allowed, true);
    assert.equal((await l.take(k, 999)).allowed, false);
    assert.equal((await l.take(k, 1000)).allowed, true);
    assert.equal((await l.take(k, 1000)).allowed, false);
    // Idle long enough: the burst is back, and no more than the burst.
    assert.equal((await l.take(k, 60_000)).allowed, true);
    assert.equal((await l.take(k, 60_000)).allowed, true);
    assert.equal((await l.take(k, 60_000)).allowed, false);
  });

  it('keeps keys apart, whatever their ids (__proto__, constructor, toString …)', async () => {
    const l = limiter({ key: { requests_per_second: 0.001, burst: 2 }, queue_classes: { interactive: wide } });
    const ids = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', '', 'k'];
    for (const keyId of ids) {
      assert.equal((await l.take({ keyId, queueClass: 'interactive' }, 0)).allowed, true, keyId);
      assert.equal((await l.take({ keyId, queueClass: 'interactive' }, 0)).allowed, true, keyId);
      assert.equal(refused(await l.take({ keyId, queueClass: 'interactive' }, 0)).limit, 'key', keyId);
    }
    assert.equal(l.size, ids.length);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });

  it('buckets a huge key id by its hash: still its own bucket, no huge Map key', async () => {
    const l = limiter({ key: { requests_per_second: 0.001, burst: 1 }, queue_classes: { interactive: wide } });
    const a = 'x'.repeat(1_000_000) + 'a';
    const b = 'x'.repeat(1_000_000) + 'b';
    assert.equal((await l.take({ keyId: a, queueClass: 'interactive' }, 0)).allowed, true);
    assert.equal((await l.take({ keyId: a, queueClass: 'interactive' }, 0)).allowed, false);
    assert.equal((await l.take({ keyId: b, queueClass: 'interactive' }, 0)).allowed, true);
  });

  it('shares a queue class among keys, and only that class', async () => {
    const l = limiter({ key: wide, queue_classes: { deep: { requests_per_second: 0.001, burst: 5 } } });
    for (let i = 0; i < 5; i++) assert.equal((await l.take({ keyId: `k${i}`, queueClass: 'deep' }, 0)).allowed, true);
    const r = refused(await l.take({ keyId: 'fresh', queueClass: 'deep' }, 0));
    assert.equal(r.limit, 'queue_class');
    assert.equal(r.backpressure, 'saturated');
    assert.equal(r.queueClass, 'deep');
    assert.equal((await l.take({ keyId: 'fresh', queueClass: 'interactive' }, 0)).allowed, true);
  });

  it('charges both buckets or neither', async () => {
    const l = limiter({ key: { requests_per_second: 0.001, burst: 2 }, queue_classes: { interactive: { requests_per_second: 0.001, burst: 3 } } });
    const t = (keyId: string) => l.take({ keyId, queueClass: 'interactive' }, 0);
    assert.equal((await t('a')).allowed, true);
    assert.equal((await t('a')).allowed, true);
    // The key refuses: the queue class must not be charged, so b still gets the last slot.
    for (let i = 0; i < 5; i++) assert.equal(refused(await t('a')).limit, 'key');
    assert.equal((await t('b')).allowed, true);
    // Now the class refuses: c's key must not be charged while it is refused …
    for (let i = 0; i < 5; i++) assert.equal(refused(await t('c')).limit, 'queue_class');
    // … so once the class has room again c still has its whole burst of 2.
    const later = 1000 * 1000 * 10; // the class has refilled completely
    assert.equal((await l.take({ keyId: 'c', queueClass: 'interactive' }, later)).allowed, true);
    assert.equal((await l.take({ keyId: 'c', queueClass: 'interactive' }, later)).allowed, true);
    assert.equal(refused(await l.take({ keyId: 'c', queueClass: 'interactive' }, later)).limit, 'key');
  });

  it('an account\'s keys share its bucket: minting keys does not multiply its rate, and a refusal charges no bucket', async () => {
    const l = limiter({ key: { requests_per_second: 0.001, burst: 2 }, account: { requests_per_second: 0.001, burst: 3 }, queue_classes: { interactive: wide } });
    const t = (keyId: string, accountId: string) => l.take({ keyId, accountId, queueClass: 'interactive' }, 0);
    assert.equal((await t('k1', 'acct')).allowed, true);
    assert.equal((await t('k1', 'acct')).allowed, true);
    assert.equal((await t('k2', 'acct')).allowed, true);
    // A fourth key of the same account: its own bucket is full, the account's is spent.
    const r = refused(await t('k3', 'acct'));
    assert.equal(r.limit, 'account');
    assert.match((await import('../../../src/accounts/limits/rate-limit-headers.ts')).rateLimitRefusal(r).message, /account/);
    // Another account is untouched; account ids like __proto__ are buckets like any other.
    assert.equal((await t('k4', '__proto__')).allowed, true);
    assert.equal((await t('k5', 'constructor')).allowed, true);
    // The refused take charged nothing: k3 still has its whole burst once the account refills.
    const later = 1e9;
    assert.equal((await l.take({ keyId: 'k3', accountId: 'acct', queueClass: 'interactive' }, later)).allowed, true);
    assert.equal((await l.take({ keyId: 'k3', accountId: 'acct', queueClass: 'interactive' }, later)).allowed, true);
    assert.equal(refused(await l.take({ keyId: 'k3', accountId: 'acct', queueClass: 'interactive' }, later)).limit, 'key');
  });

  it('names the longer wait when both refuse, and reports backpressure from the class bucket', async () => {
    const l = limiter({ key: { requests_per_second: 0.1, burst: 1 }, queue_classes: { interactive: { requests_per_second: 1, burst: 10 } } });
    const states: string[] = [];
    for (let i = 0; i < 10; i++) states.push((await l.take({ keyId: `k${i}`, queueClass: 'interactive' }, 0)).backpressure);
    assert.deepEqual(states, ['normal', 'normal', 'normal', 'normal', 'elevated', 'elevated', 'elevated', 'elevated', 'saturated', 'saturated']);
    // k0: key waits 10 s, class 1 s → the key is named, Retry-After 10.
    const both = refused(await l.take({ keyId: 'k0', queueClass: 'interactive' }, 0));
    assert.equal(both.limit, 'key');
    assert.equal(both.retryAfterSeconds, 10);
    assert.equal(both.backpressure, 'saturated');
  });

  it('keeps memory bounded: maxKeys at most, idle buckets swept as it goes', async () => {
    const l = limiter({ key: { requests_per_second: 1, burst: 1 }, queue_classes: { interactive: wide } }, 1000);
    for (let i = 0; i < 10_000; i++) await l.take({ keyId: `k${i}`, queueClass: 'interactive' }, 0);
    assert.equal(l.size, 1000);
    // Every bucket above is idle after 1 s: new takes sweep two stale ones each.
    for (let i = 0; i < 600; i++) await l.take({ keyId: `n${i}`, queueClass: 'interactive' }, 5000);
    assert.equal(l.size, 600);
    // A swept bucket answers as an idle one: full.
    assert.equal((await l.take({ keyId: 'k9999', queueClass: 'interactive' }, 5000)).allowed, true);
  });

  it('admits a request landing exactly on its slot, at any clock value (no rounding refusals)', async () => {
    const l = limiter({ key: { requests_per_second: 3, burst: 1 }, queue_classes: { interactive: { requests_per_second: 0.01, burst: 1000 } } });
    for (const start of [0, 523.456, 1e6 + 0.1, 1.7e12 + 0.3]) {
      const keyId = `k${start}`;
      for (let i = 0; i < 30; i++) assert.equal((await l.take({ keyId, queueClass: 'interactive' }, start + (i * 1000) / 3)).allowed, true, `${start} #${i}`);
    }
  });

  it('uses its clock when no time is given', async () => {
    let now = 0;
    const l = new MemoryRateLimiter({ limits: { key: { requests_per_second: 1, burst: 1 } }, clock: () => now });
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, true);
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, false);
    now = 1000;
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, true);
  });

  it('refuses bad configuration and an unknown queue class with clear errors', async () => {
    assert.throws(() => new MemoryRateLimiter({ limits: { key: { requests_per_second: 0, burst: 1 } } }), /requests_per_second/);
    assert.throws(() => new MemoryRateLimiter({ limits: { key: { requests_per_second: 1, burst: 0.5 } } }), /burst/);
    assert.throws(() => new MemoryRateLimiter({ maxKeys: 0 }), /maxKeys/);
    const l = new MemoryRateLimiter();
    await assert.rejects(l.take({ keyId: 'k', queueClass: 'bogus' as 'deep' }), TypeError);
  });

  it('lets a normal client through on the defaults: 64 at once, then 20 a second for a minute', async () => {
    const l = new MemoryRateLimiter();
    for (let i = 0; i < 64; i++) assert.equal((await l.take({ keyId: 'client', queueClass: 'interactive' }, 0)).allowed, true);
    for (let ms = 50; ms <= 60_000; ms += 50) assert.equal((await l.take({ keyId: 'client', queueClass: 'interactive' }, ms)).allowed, true);
  });
});
