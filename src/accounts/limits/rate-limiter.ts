import { createHash } from 'node:crypto';
import type { QueueClass } from './queue-classes.ts';
import type { BucketParams } from './limits-config.ts';

/**
 * `x-svc-backpressure-state`, from how much of its queue class's burst is in use:
 * - `normal`: under half;
 * - `elevated`: half or more (clients should slow down);
 * - `saturated`: 90% or more, or the queue class refused the request;
 * - `degraded`: the shared (Redis) limiter is unreachable and this replica limits on its own.
 */
export const BACKPRESSURE_STATES = ['normal', 'elevated', 'saturated', 'degraded'] as const;
export type BackpressureState = (typeof BACKPRESSURE_STATES)[number];

export const ELEVATED_FILL = 0.5;
export const SATURATED_FILL = 0.9;

/** Which bucket refused: the API key's own, its account's (all its keys and sessions), or the queue class's shared one. */
export type LimitName = 'key' | 'account' | 'queue_class';

export interface LimitKeys {
  /** The API key's id (not its secret). Any string works, `__proto__` included. */
  keyId: string;
  /**
   * The account the key or session belongs to: its bucket is shared by all of the account's keys
   * and sessions, so minting keys does not multiply its rate. Absent: no account bucket (the
   * local daemon's developer keys, which have no account here).
   */
  accountId?: string | undefined;
  queueClass: QueueClass;
}

interface DecisionBase {
  queueClass: QueueClass;
  backpressure: BackpressureState;
  /** True when the shared limiter was unreachable and this replica's own buckets decided. */
  degraded: boolean;
}

export type LimitDecision =
  | (DecisionBase & { allowed: true })
  | (DecisionBase & {
    allowed: false;
    /** Whole seconds until the request would be admitted (at least 1): Retry-After and `retry_after_seconds`. */
    retryAfterSeconds: number;
    limit: LimitName;
  });

export type RefusedDecision = Extract<LimitDecision, { allowed: false }>;

/**
 * The hosted tier's backstop limiter. A request takes one unit from its key's bucket, its
 * account's bucket and its queue class's bucket at once: if any refuses, none is charged.
 */
export interface RateLimiter {
  /**
   * `now` (milliseconds, the limiter's own clock) is for tests of the in-process limiter; the
   * Redis limiter ignores it and uses the Redis server's clock, which every replica shares.
   */
  take(keys: LimitKeys, now?: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

/**
 * Waits up to this (1 ns) count as none: arrival times are sums of fractional intervals, and
 * a request landing exactly on its slot must not be refused by floating-point rounding.
 * The Redis script uses the same bound.
 */
export const WAIT_EPSILON_MS = 1e-6;

/** One bucket's verdict for one request (GCRA; times in ms). */
export interface BucketStep {
  /** The bucket's theoretical arrival time if this request is charged. */
  newTat: number;
  /** > WAIT_EPSILON_MS: refused, admitted after this many ms; otherwise admitted. */
  waitMs: number;
  /** Share of the burst in use after this request (if admitted) or now (if refused), 0 to 1. */
  fill: number;
}

/**
 * GCRA: a bucket is just its theoretical arrival time (TAT). A stored TAT in the past is an
 * idle, full bucket, which is why idle buckets can be forgotten without changing any answer.
 */
export function gcraStep(storedTat: number | undefined, now: number, params: BucketParams): BucketStep {
  const tat = storedTat === undefined || storedTat < now ? now : storedTat;
  const newTat = tat + params.intervalMs;
  // (tat - now) first: exactly 0 for an idle bucket, so a burst of 1 is never refused by rounding.
  const waitMs = tat - now + params.intervalMs - params.toleranceMs;
  const used = waitMs > WAIT_EPSILON_MS ? tat - now : newTat - now;
  return { newTat, waitMs, fill: Math.min(1, Math.max(0, used / params.toleranceMs)) };
}

export function backpressureFromFill(fill: number, queueClassRefused: boolean): BackpressureState {
  if (queueClassRefused || fill >= SATURATED_FILL) return 'saturated';
  if (fill >= ELEVATED_FILL) return 'elevated';
  return 'normal';
}

/** Each bucket's wait (ms; > WAIT_EPSILON_MS refuses). `account` is 0 when there is no account bucket. */
export interface StepWaits {
  key: number;
  account: number;
  queueClass: number;
}

/**
 * The buckets' verdicts → one decision. When several refuse, the one that waits longest is named
 * (it is what Retry-After reflects); a tie names the key, then the account: the limits the
 * caller controls.
 */
export function combineSteps(queueClass: QueueClass, waits: StepWaits, queueFill: number, degraded: boolean): LimitDecision {
  const queueRefused = waits.queueClass > WAIT_EPSILON_MS;
  const backpressure: BackpressureState = degraded ? 'degraded' : backpressureFromFill(queueFill, queueRefused);
  const waitMs = Math.max(waits.key, waits.account, waits.queueClass);
  if (waitMs <= WAIT_EPSILON_MS) return { allowed: true, queueClass, backpressure, degraded };
  return {
    allowed: false,
    queueClass,
    backpressure,
    degraded,
    retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    limit: waits.key === waitMs ? 'key' : waits.account === waitMs ? 'account' : 'queue_class',
  };
}

/** Key ids longer than this are bucketed by their SHA-256, so no caller can make a bucket's name large. */
export const MAX_KEY_ID_CHARS = 128;

export function boundedKeyId(keyId: string): string {
  return keyId.length <= MAX_KEY_ID_CHARS ? keyId : `sha256:${createHash('sha256').update(keyId).digest('hex')}`;
}
