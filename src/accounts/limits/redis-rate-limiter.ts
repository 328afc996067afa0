import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { resolveLimits, type LimitsInput, type ResolvedLimits } from './limits-config.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import {
  boundedKeyId, combineSteps,
  type LimitDecision, type LimitKeys, type RateLimiter,
} from './rate-limiter.ts';

/** What the limiter logs with (pino's Logger fits). */
export interface LimiterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisRateLimiterOptions {
  /** `redis://` or `rediss://` URL; credentials in it never reach a log. */
  url: string;
  limits?: LimitsInput | undefined;
  /** Prefix of every key this limiter writes; replicas that share limits share it. */
  keyPrefix?: string | undefined;
  /** Bound on establishing the connection (ms). */
  connectTimeoutMs?: number | undefined;
  /** Bound on one take's round trip (ms); past it the take is decided locally. */
  commandTimeoutMs?: number | undefined;
  log?: LimiterLog | undefined;
}

export const DEFAULT_KEY_PREFIX = 'svc:rl:';
export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 250;

/**
 * Checks and charges the key's, the queue class's and (when KEYS[3] is given) the account's
 * buckets in one step, on the Redis server's clock, so replicas with different clocks agree and
 * no request is charged to one bucket and refused by another.
 * The GCRA here is the same as gcraStep in rate-limiter.ts (times in ms, WAIT_EPSILON_MS = 1e-6). A bucket lives only
 * until its arrival time passes (PX): an expired bucket and an idle one answer the same.
 * Values are returned as strings because Redis truncates Lua numbers to integers.
 */
const TAKE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function step(key, interval, tolerance)
  local stored = tonumber(redis.call('GET', key))
  local tat = now
  if stored ~= nil and stored > now then tat = stored end
  local new_tat = tat + interval
  local wait = (tat - now) + interval - tolerance
  local used = new_tat - now
  if wait > 1e-6 then used = tat - now end
  return new_tat, wait, used / tolerance
end
local k_new, k_wait = step(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
local q_new, q_wait, q_fill = step(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
local a_new, a_wait = 0, 0
if #KEYS > 2 then a_new, a_wait = step(KEYS[3], tonumber(ARGV[5]), tonumber(ARGV[6])) end
if k_wait <= 1e-6 and q_wait <= 1e-6 and a_wait <= 1e-6 then
  redis.call('SET', KEYS[1], string.format('%.6f', k_new), 'PX', math.ceil(k_new - now) + 1)
  redis.call('SET', KEYS[2], string.format('%.6f', q_new), 'PX', math.ceil(q_new - now) + 1)
  if #KEYS > 2 then redis.call('SET', KEYS[3], string.format('%.6f', a_new), 'PX', math.ceil(a_new - now) + 1) end
end
return {tostring(k_wait), tostring(q_wait), tostring(q_fill), tostring(a_wait)}
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

/**
 * The limiter shared by every replica on one Redis. When Redis cannot be reached (refused,
 * down, too slow) it fails open to this replica's own in-process buckets with the same limits:
 * the service stays up and each replica is still protected, only the limits stop being shared.
 * Decisions then say `degraded` (and `x-svc-backpressure-state: degraded`); the change is
 * logged once each way, not per request.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #limits: ResolvedLimits;
  readonly #prefix: string;
  readonly #fallback: MemoryRateLimiter;
  readonly #log: LimiterLog | undefined;
  readonly #keyArgs: [string, string];
  readonly #accountArgs: [string, string];
  #degraded = false;

  private constructor(redis: Redis, limits: ResolvedLimits, options: RedisRateLimiterOptions) {
    this.#redis = redis;
    this.#limits = limits;
    this.#prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#fallback = new MemoryRateLimiter({ limits: this.#limits.config });
    this.#log = options.log;
    this.#keyArgs = [String(this.#limits.key.intervalMs), String(this.#limits.key.toleranceMs)];
    this.#accountArgs = [String(this.#limits.account.intervalMs), String(this.#limits.account.toleranceMs)];
  }

  /**
   * Connects within the connect timeout. An unreachable Redis does not stop the opening: the
   * limiter starts degraded and keeps reconnecting in the background. A malformed URL throws.
   */
  static async open(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
    const url = parseRedisUrl(options.url);
    const limits = resolveLimits(options.limits);
    const connectTimeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const redis = new Redis(url.href, {
      lazyConnect: true,
      connectTimeout,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      // Fail now rather than queue or retry: a take that cannot reach Redis is decided locally.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times: number) => Math.min(100 * times, 2000),
    });
    const limiter = new RedisRateLimiter(redis, limits, options);
    redis.on('error', (error: unknown) => { limiter.#enterDegraded(error); });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        redis.connect(),
        new Promise((_, reject) => { timer = setTimeout(() => { reject(new Error(`no connection within ${connectTimeout} ms`)); }, connectTimeout + 100); }),
      ]);
    } catch (error) {
      limiter.#enterDegraded(error);
    } finally {
      clearTimeout(timer);
    }
    return limiter;
  }

  /** True while takes are decided by this replica alone. */
  get degraded(): boolean {
    return this.#degraded;
  }

  async take(keys: LimitKeys, _now?: number): Promise<LimitDecision> {
    const queueParams = this.#limits.queueClasses.get(keys.queueClass);
    if (queueParams === undefined) throw new TypeError(`unknown queue class ${JSON.stringify(keys.queueClass)}`);
    if (this.#redis.status !== 'ready') {
      this.#enterDegraded(new Error(`connection ${this.#redis.status}`));
      return this.#local(keys);
    }
    const redisKeys = [`${this.#prefix}k:${boundedKeyId(keys.keyId)}`, `${this.#prefix}q:${keys.queueClass}`];
    const args = [...this.#keyArgs, String(queueParams.intervalMs), String(queueParams.toleranceMs)];
    if (keys.accountId !== undefined) {
      redisKeys.push(`${this.#prefix}a:${boundedKeyId(keys.accountId)}`);
      args.push(...this.#accountArgs);
    }
    let steps: [number, number, number, number];
    try {
      const reply: unknown = await this.#redis.evalsha(TAKE_SHA, redisKeys.length, ...redisKeys, ...args).catch((error: unknown) => {
        // NOSCRIPT: the server has not seen the script yet (or was restarted); send it whole once.
        if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return this.#redis.eval(TAKE_SCRIPT, redisKeys.length, ...redisKeys, ...args);
        throw error;
      });
      steps = parseReply(reply);
    } catch (error) {
      this.#enterDegraded(error);
      return this.#local(keys);
    }
    const [keyWait, queueWait, queueFill, accountWait] = steps;
    if (this.#degraded) {
      this.#degraded = false;
      this.#log?.info({ limiter: 'redis' }, 'rate limiter: Redis reachable again; limits are shared across replicas');
    }
    return combineSteps(keys.queueClass, { key: keyWait, account: accountWait, queueClass: queueWait }, queueFill, false);
  }

  #local(keys: LimitKeys): LimitDecision {
    return { ...this.#fallback.takeSync(keys), backpressure: 'degraded', degraded: true };
  }

  #enterDegraded(error: unknown): void {
    if (this.#degraded) return;
    this.#degraded = true;
    this.#log?.warn(
      { limiter: 'redis', reason: error instanceof Error ? error.message : String(error) },
      'rate limiter: Redis unreachable; failing open to per-replica limits',
    );
  }

  async close(): Promise<void> {
    await this.#fallback.close();
    this.#redis.disconnect();
  }
}

function parseRedisUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError('the Redis URL is not a URL (expected redis://host:port or rediss://host:port)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError(`the Redis URL must start with redis:// or rediss://, not ${url.protocol}//`);
  }
  return url;
}

function parseReply(reply: unknown): [number, number, number, number] {
  if (Array.isArray(reply) && reply.length === 4) {
    const numbers = reply.map((v) => (typeof v === 'string' ? Number(v) : Number.NaN));
    if (numbers.every(Number.isFinite)) return numbers as [number, number, number, number];
  }
  throw new Error('unexpected reply from the rate-limit script');
}
