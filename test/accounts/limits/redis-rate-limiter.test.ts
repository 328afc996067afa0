import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { LimitsInput } from '../../../src/accounts/limits/limits-config.ts';
import type { LimitDecision } from '../../../src/accounts/limits/rate-limiter.ts';
import { RedisRateLimiter, type LimiterLog } from '../../../src/accounts/limits/redis-rate-limiter.ts';
import { freePort } from '../../helpers/free-port.ts';
import { redisUnavailable, TEST_REDIS_URL as REDIS_URL } from '../../helpers/test-services.ts';

// The tests of a Redis that is down, silent or malformed need none; the others, the machine's.
const NO_REDIS = await redisUnavailable('the 9 RedisRateLimiter tests that need a live Redis');
/** One prefix per run, so runs (and other suites on the same Redis) never share a bucket. */
const RUN_PREFIX = `svc-test:rl:${process.pid}:${randomUUID()}:`;
const wide = { requests_per_second: 1_000_000, burst: 1_000_000 };

let admin: Redis;
const opened: RedisRateLimiter[] = [];
let testNumber = 0;

async function open(limits: LimitsInput, prefix = `${RUN_PREFIX}${testNumber++}:`, commandTimeoutMs?: number): Promise<RedisRateLimiter> {
  const l = await RedisRateLimiter.open({ url: REDIS_URL, limits, keyPrefix: prefix, commandTimeoutMs });
  opened.push(l);
  assert.equal(l.degraded, false, 'the test Redis must be reachable');
  return l;
}

function refused(d: LimitDecision): Extract<LimitDecision, { allowed: false }> {
  assert.equal(d.allowed, false, 'expected a refusal');
  return d as Extract<LimitDecision, { allowed: false }>;
}

function recordingLog(): LimiterLog & { warnings: string[]; infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  return { warnings, infos, warn: (_o, m) => { warnings.push(m); }, info: (_o, m) => { infos.push(m); } };
}

before(async () => {
  if (NO_REDIS !== false) return;
  admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  await admin.ping();
});

after(async () => {
  await Promise.all(opened.map((l) => l.close()));
  if (NO_REDIS !== false) return;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${RUN_PREFIX}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  admin.disconnect();
});

describe('RedisRateLimiter', () => {
  it('shares an account\'s bucket among its keys, on every replica, and a refusal charges no bucket', { skip: NO_REDIS }, async () => {
    const prefix = `${RUN_PREFIX}${testNumber++}:`;
    const limits = { key: { requests_per_second: 0.001, burst: 5 }, account: { requests_per_second: 0.001, burst: 3 }, queue_classes: { interactive: wide } };
    const a = await open(limits, prefix);
    const b = await open(limits, prefix);
    const t = (l: RedisRateLimiter, keyId: string) => l.take({ keyId, accountId: 'acct', queueClass: 'interactive' });
    assert.equal((await t(a, 'k1')).allowed, true);
    assert.equal((await t(b, 'k2')).allowed, true);
    assert.equal((await t(a, 'k3')).allowed, true);
    assert.equal(refused(await t(b, 'k4')).limit, 'account');
    // k4's own bucket was not charged by the refusal, nor the queue class's.
    assert.equal(await admin.exists(`${prefix}k:k4`), 0);
    // Without an account (the local developer keys) there is no account bucket.
    assert.equal((await a.take({ keyId: 'k4', queueClass: 'interactive' })).allowed, true);
  });

  it('admits the burst, then refuses with the whole seconds until the next slot', { skip: NO_REDIS }, async () => {
    const l = await open({ key: { requests_per_second: 0.5, burst: 3 }, queue_classes: { interactive: wide } });
    for (let i = 0; i < 3; i++) assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, true);
    const r = refused(await l.take({ keyId: 'k', queueClass: 'interactive' }));
    assert.equal(r.limit, 'key');
    assert.equal(r.retryAfterSeconds, 2);
    assert.equal(r.degraded, false);
  });

  it('refills after the interval (small windows on the Redis clock)', { skip: NO_REDIS }, async () => {
    const l = await open({ key: { requests_per_second: 10, burst: 2 }, queue_classes: { interactive: wide } });
    const k = { keyId: 'k', queueClass: 'interactive' } as const;
    assert.equal((await l.take(k)).allowed, true);
    assert.equal((await l.take(k)).allowed, true);
    assert.equal((await l.take(k)).allowed, false);
    await sleep(120);
    assert.equal((await l.take(k)).allowed, true);
    assert.equal((await l.take(k)).allowed, false);
  });

  it('keeps keys apart, whatever their ids, and expires idle buckets', { skip: NO_REDIS }, async () => {
    const prefix = `${RUN_PREFIX}${testNumber++}:`;
    const l = await open({ key: { requests_per_second: 0.5, burst: 1 }, queue_classes: { interactive: wide } }, prefix);
    for (const keyId of ['__proto__', 'constructor', 'toString', '', 'a:b', 'x'.repeat(10_000)]) {
      assert.equal((await l.take({ keyId, queueClass: 'interactive' })).allowed, true, keyId.slice(0, 20));
      assert.equal(refused(await l.take({ keyId, queueClass: 'interactive' })).limit, 'key', keyId.slice(0, 20));
    }
    // The class bucket (a million a second) is idle again within 2 ms and may be gone already.
    const keys = await admin.keys(`${prefix}k:*`);
    assert.equal(keys.length, 6);
    for (const key of keys) {
      assert.ok(key.length < prefix.length + 100, 'a long id is stored by its hash');
      const ttl = await admin.pttl(key);
      assert.ok(ttl > 0 && ttl <= 2001, `${key} expires when idle (pttl ${ttl})`);
    }
  });

  it('shares a queue class among keys, and only that class', { skip: NO_REDIS }, async () => {
    const l = await open({ key: wide, queue_classes: { deep: { requests_per_second: 0.01, burst: 5 } } });
    for (let i = 0; i < 5; i++) assert.equal((await l.take({ keyId: `k${i}`, queueClass: 'deep' })).allowed, true);
    const r = refused(await l.take({ keyId: 'fresh', queueClass: 'deep' }));
    assert.equal(r.limit, 'queue_class');
    assert.equal(r.backpressure, 'saturated');
    assert.equal((await l.take({ keyId: 'fresh', queueClass: 'interactive' })).allowed, true);
  });

  it('charges both buckets or neither', { skip: NO_REDIS }, async () => {
    const l = await open({ key: { requests_per_second: 0.01, burst: 2 }, queue_classes: { interactive: { requests_per_second: 0.01, burst: 3 } } });
    const t = (keyId: string) => l.take({ keyId, queueClass: 'interactive' });
    assert.equal((await t('a')).allowed, true);
    assert.equal((await t('a')).allowed, true);
    for (let i = 0; i < 5; i++) assert.equal(refused(await t('a')).limit, 'key');
    assert.equal((await t('b')).allowed, true, 'refusals by the key did not charge the class');
    for (let i = 0; i < 5; i++) assert.equal(refused(await t('c')).limit, 'queue_class');
    assert.equal(await admin.exists(`${RUN_PREFIX}${testNumber - 1}:k:c`), 0, 'refusals by the class did not charge the key');
  });

  it('two replicas on one Redis share the limits under 1,000 concurrent takes: exactly 100 admitted', { skip: NO_REDIS }, async () => {
    const prefix = `${RUN_PREFIX}${testNumber++}:`;
    const limits = { key: wide, queue_classes: { interactive: { requests_per_second: 0.001, burst: 100 } } };
    // What is under test is the sharing, not Redis's speed: on a machine busy enough that 1,000
    // takes outlast the default command timeout, a take would go degraded (per replica) instead.
    const [a, b] = [await open(limits, prefix, 30_000), await open(limits, prefix, 30_000)];
    const takes = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? a : b).take({ keyId: `k${i % 37}`, queueClass: 'interactive' }));
    const decisions = await Promise.all(takes);
    assert.equal(decisions.filter((d) => d.allowed).length, 100);
    assert.ok(decisions.every((d) => !d.degraded));

    // The same for one key's own limit, spread over both replicas.
    const keyPrefix = `${RUN_PREFIX}${testNumber++}:`;
    const keyLimits = { key: { requests_per_second: 0.001, burst: 100 }, queue_classes: { interactive: wide } };
    const [c, d] = [await open(keyLimits, keyPrefix, 30_000), await open(keyLimits, keyPrefix, 30_000)];
    const keyTakes = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? c : d).take({ keyId: '__proto__', queueClass: 'interactive' }));
    assert.equal((await Promise.all(keyTakes)).filter((x) => x.allowed).length, 100);
  });

  it('loads the script again after SCRIPT FLUSH (EVALSHA falls back to EVAL)', { skip: NO_REDIS }, async () => {
    const l = await open({ key: { requests_per_second: 0.01, burst: 1 } });
    await admin.script('FLUSH');
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).allowed, true);
    const r = refused(await l.take({ keyId: 'k', queueClass: 'interactive' }));
    assert.equal(r.degraded, false);
  });

  it('Redis down (closed port): opens and answers at once, degraded, still limiting per replica; one warning', async () => {
    const log = recordingLog();
    const started = performance.now();
    const l = await RedisRateLimiter.open({ url: `redis://127.0.0.1:${await freePort()}`, limits: { key: { requests_per_second: 0.01, burst: 3 } }, log });
    opened.push(l);
    assert.ok(performance.now() - started < 1500, 'open is bounded by the connect timeout');
    assert.equal(l.degraded, true);
    const t0 = performance.now();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await l.take({ keyId: 'k', queueClass: 'interactive' }));
    assert.ok(performance.now() - t0 < 100, 'takes do not wait for Redis');
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, false, false]);
    assert.ok(decisions.every((d) => d.degraded && d.backpressure === 'degraded'));
    await sleep(300); // reconnect attempts fail meanwhile
    await l.take({ keyId: 'k', queueClass: 'interactive' });
    assert.equal(log.warnings.length, 1);
    assert.match(log.warnings[0] ?? '', /failing open/);
  });

  it('Redis that accepts and never answers: bounded open and takes', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => { sockets.push(s); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const log = recordingLog();
      const started = performance.now();
      const l = await RedisRateLimiter.open({ url: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`, connectTimeoutMs: 300, commandTimeoutMs: 100, log });
      opened.push(l);
      assert.ok(performance.now() - started < 1000, `open took ${performance.now() - started} ms`);
      const t0 = performance.now();
      const d = await l.take({ keyId: 'k', queueClass: 'deep' });
      assert.ok(performance.now() - t0 < 300);
      assert.equal(d.allowed, true);
      assert.equal(d.backpressure, 'degraded');
      assert.equal(log.warnings.length, 1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => { r(); }));
    }
  });

  it('goes back to shared limits when Redis comes back, and says so once', { skip: NO_REDIS }, async (t) => {
    // A TCP relay to the real Redis that can be switched off and on.
    const target = new URL(REDIS_URL);
    const sockets = new Set<Socket>();
    let relay = await startRelay();
    async function startRelay(port = 0): Promise<Server> {
      const { connect } = await import('node:net');
      const s = createServer((client) => {
        const upstream = connect(Number(target.port || 6379), target.hostname);
        sockets.add(client); sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => { client.destroy(); upstream.destroy(); };
        client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end);
      });
      await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
      return s;
    }
    const port = (relay.address() as AddressInfo).port;
    const log = recordingLog();
    const l = await RedisRateLimiter.open({ url: `redis://127.0.0.1:${port}`, keyPrefix: `${RUN_PREFIX}${testNumber++}:`, log });
    opened.push(l);
    t.after(async () => {
      await l.close();
      await new Promise<void>((r) => { relay.close(() => { r(); }); for (const s of sockets) s.destroy(); });
    });
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).degraded, false);
    await new Promise<void>((r) => { relay.close(() => { r(); }); for (const s of sockets) s.destroy(); });
    await sleep(50);
    assert.equal((await l.take({ keyId: 'k', queueClass: 'interactive' })).degraded, true);
    relay = await startRelay(port);
    let back = false;
    for (let i = 0; i < 60 && !back; i++) {
      await sleep(100);
      back = !(await l.take({ keyId: 'k', queueClass: 'interactive' })).degraded;
    }
    assert.equal(back, true, 'reconnected within 6 s');
    assert.equal(log.warnings.length, 1);
    assert.equal(log.infos.length, 1);
  });

  it('refuses a malformed URL and bad limits up front', async () => {
    await assert.rejects(RedisRateLimiter.open({ url: 'not a url' }), /Redis URL/);
    await assert.rejects(RedisRateLimiter.open({ url: 'http://127.0.0.1:6379' }), /redis:\/\//);
    await assert.rejects(RedisRateLimiter.open({ url: REDIS_URL, limits: { key: { requests_per_second: -1, burst: 1 } } }), /requests_per_second/);
  });
});
