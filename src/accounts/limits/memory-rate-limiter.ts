import type { QueueClass } from './queue-classes.ts';
import { resolveLimits, type LimitsInput, type ResolvedLimits } from './limits-config.ts';
import {
  boundedKeyId, combineSteps, gcraStep,
  type LimitDecision, type LimitKeys, type RateLimiter,
} from './rate-limiter.ts';

export interface MemoryRateLimiterOptions {
  limits?: LimitsInput | undefined;
  /** Most key buckets kept; past it the least recently charged is forgotten. */
  maxKeys?: number | undefined;
  /** The clock when `take` is given no `now` (ms). Monotonic by default, so a wall-clock step changes nothing. */
  clock?: (() => number) | undefined;
}

export const DEFAULT_MAX_KEYS = 100_000;
/** Idle buckets swept per take: a constant, so every take stays O(1). */
const SWEEP_PER_TAKE = 2;

/**
 * The limiter for one replica without Redis (and the fallback when Redis is unreachable).
 * Each bucket is one number (its GCRA arrival time) in a Map, which also keeps keys in the
 * order they were last charged: the front is the stalest, so idle buckets are found and
 * dropped there a few per take, and when the Map is full the front one goes.
 *
 * Forgetting an idle bucket changes no answer (an idle bucket is a full one). Forgetting a
 * busy one, only when more than `maxKeys` keys are active, makes that key's next request see a
 * full bucket: memory stays bounded at the price of leniency, never of a wrong refusal.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #limits: ResolvedLimits;
  readonly #maxKeys: number;
  readonly #clock: () => number;
  readonly #keys = new Map<string, number>();
  readonly #queues = new Map<QueueClass, number>();

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#limits = resolveLimits(options.limits);
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isInteger(this.#maxKeys) || this.#maxKeys < 1) throw new RangeError('maxKeys must be a whole number of at least 1');
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Key buckets held now (for tests and metrics). */
  get size(): number {
    return this.#keys.size;
  }

  // async so that a bad argument rejects, as the Redis limiter's does, instead of throwing.
  async take(keys: LimitKeys, now?: number): Promise<LimitDecision> {
    return this.takeSync(keys, now);
  }

  /** The same as `take`, for callers that want no promise (the Redis limiter's fallback). */
  takeSync(keys: LimitKeys, now: number = this.#clock()): LimitDecision {
    const queueParams = this.#limits.queueClasses.get(keys.queueClass);
    if (queueParams === undefined) throw new TypeError(`unknown queue class ${JSON.stringify(keys.queueClass)}`);
    // Key and account buckets share one Map (and its bound), told apart by a prefix.
    const id = `k:${boundedKeyId(keys.keyId)}`;
    const accountId = keys.accountId === undefined ? undefined : `a:${boundedKeyId(keys.accountId)}`;
    const keyStep = gcraStep(this.#keys.get(id), now, this.#limits.key);
    const accountStep = accountId === undefined ? undefined : gcraStep(this.#keys.get(accountId), now, this.#limits.account);
    const queueStep = gcraStep(this.#queues.get(keys.queueClass), now, queueParams);
    const decision = combineSteps(keys.queueClass, { key: keyStep.waitMs, account: accountStep?.waitMs ?? 0, queueClass: queueStep.waitMs }, queueStep.fill, false);
    if (decision.allowed) {
      this.#charge(id, keyStep.newTat);
      if (accountId !== undefined) this.#charge(accountId, accountStep!.newTat);
      this.#queues.set(keys.queueClass, queueStep.newTat);
      this.#sweep(now);
    }
    return decision;
  }

  #charge(id: string, tat: number): void {
    // Delete then set moves the bucket to the back: the Map's order is "last charged".
    this.#keys.delete(id);
    this.#keys.set(id, tat);
  }

  #sweep(now: number): void {
    let swept = 0;
    for (const [id, tat] of this.#keys) {
      if (swept >= SWEEP_PER_TAKE || tat > now) break;
      this.#keys.delete(id);
      swept += 1;
    }
    while (this.#keys.size > this.#maxKeys) {
      const oldest = this.#keys.keys().next();
      if (oldest.done === true) break;
      this.#keys.delete(oldest.value);
    }
  }

  close(): Promise<void> {
    this.#keys.clear();
    this.#queues.clear();
    return Promise.resolve();
  }
}
