import type { LimitsInput } from './limits-config.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter, type LimiterLog } from './redis-rate-limiter.ts';

export interface OpenRateLimiterOptions {
  /** Set: limits shared by every replica on this Redis. Unset: this process's own buckets. */
  redisUrl?: string | undefined;
  limits?: LimitsInput | undefined;
  keyPrefix?: string | undefined;
  log?: LimiterLog | undefined;
}

/** The hosted tier's limiter: Redis-backed when configured, in-process otherwise. Invalid limits or URL throw. */
export async function openRateLimiter(options: OpenRateLimiterOptions = {}): Promise<RateLimiter> {
  if (options.redisUrl === undefined || options.redisUrl === '') return new MemoryRateLimiter({ limits: options.limits });
  return RedisRateLimiter.open({ url: options.redisUrl, limits: options.limits, keyPrefix: options.keyPrefix, log: options.log });
}
