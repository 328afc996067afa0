/**
 * What one `take()` of the hosted backstop limiter costs: the in-process limiter, and the Redis
 * one against the machine's Redis (one round trip running the Lua script), sequential (latency)
 * and with 64 takes in flight (throughput). Keys are spread over 10,000 ids and accounts over
 * 1,000 (each take charges its key's, its account's and its queue class's buckets, as the hosted
 * routes do), so the Map and Redis both hold many buckets; limits are wide so every take is
 * admitted and charged.
 *
 * Usage: npm run bench:hosted-limiter [-- --takes 20000 --redis redis://127.0.0.1:6379]
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { MemoryRateLimiter } from '../src/accounts/limits/memory-rate-limiter.ts';
import type { RateLimiter } from '../src/accounts/limits/rate-limiter.ts';
import { RedisRateLimiter } from '../src/accounts/limits/redis-rate-limiter.ts';

const { values: flags } = parseArgs({
  options: {
    takes: { type: 'string', default: '20000' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const TAKES = Number(flags.takes);
const wide = { requests_per_second: 1_000_000, burst: 1_000_000 };
const limits = { key: wide, account: wide, queue_classes: { interactive: wide, deep: wide, enterprise: wide } };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function sequential(l: RateLimiter): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < TAKES; i++) {
    const t0 = performance.now();
    const d = await l.take({ keyId: `key-${i % 10_000}`, accountId: `acct-${i % 1000}`, queueClass: 'interactive' });
    times.push(performance.now() - t0);
    if (!d.allowed || d.degraded) throw new Error('bench limits should admit every take');
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5) * 1000, p99: quantile(times, 0.99) * 1000 };
}

async function concurrent(l: RateLimiter, inFlight: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < TAKES) {
      const i = next++;
      await l.take({ keyId: `key-${i % 10_000}`, accountId: `acct-${i % 1000}`, queueClass: 'interactive' });
    }
  }));
  return TAKES / ((performance.now() - t0) / 1000);
}

const prefix = `svc-bench:rl:${randomUUID()}:`;
const memory = new MemoryRateLimiter({ limits });
const redis = await RedisRateLimiter.open({ url: flags.redis, limits, keyPrefix: prefix });
if (redis.degraded) throw new Error(`Redis at ${flags.redis} is not reachable`);

console.log(`hosted limiter take(): ${TAKES} takes per run, 10,000 keys; ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, load ${loadavg()[0]?.toFixed(2)}`);
for (const [name, l] of [['memory', memory], ['redis', redis]] as const) {
  await sequential(l); // warm-up: JIT, script cache, connections
  const runs = [await sequential(l), await sequential(l), await sequential(l)];
  const p50 = runs.map((r) => r.p50).sort((a, b) => a - b)[1] ?? Number.NaN;
  const p99 = runs.map((r) => r.p99).sort((a, b) => a - b)[1] ?? Number.NaN;
  const rate = await concurrent(l, 64);
  console.log(`${name.padEnd(7)} p50 ${p50.toFixed(1).padStart(7)} µs   p99 ${p99.toFixed(1).padStart(7)} µs   64 in flight: ${Math.round(rate).toLocaleString('en')} takes/s   (median of 3 runs)`);
}
await memory.close();
await redis.close();

const admin = new Redis(flags.redis);
let cursor = '0';
do {
  const [nextCursor, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  if (keys.length > 0) await admin.del(...keys);
  cursor = nextCursor;
} while (cursor !== '0');
admin.disconnect();
