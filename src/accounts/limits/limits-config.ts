import { z } from 'zod';
import { QUEUE_CLASSES, type QueueClass } from './queue-classes.ts';

/**
 * The backstop limiter's numbers. Each bucket is a GCRA (a token bucket without a refill
 * timer): `burst` requests may arrive at once, after which they are admitted at
 * `requests_per_second`. Snake case, like the route configuration, because these come from
 * configuration files.
 */
export const bucketLimitSchema = z.strictObject({
  /** Sustained rate; one request is admitted every 1/rate seconds once the burst is spent. */
  requests_per_second: z.number().positive().max(1_000_000),
  /** Requests admitted back to back from an idle bucket. */
  burst: z.int().min(1).max(1_000_000),
});
export type BucketLimit = z.infer<typeof bucketLimitSchema>;

/**
 * Defaults (docs/hosted.md, "Rate limits", says why): per key, 3,000 requests a minute with
 * bursts of 200, more than an interactive client or a batch script with a few hundred requests
 * in flight sends, so a normal client never sees a 429, while no one key can take a queue class
 * alone; per queue class, about what one gateway process handles with every request
 * authenticated and ledgered, so a flood is turned away before it costs more.
 */
export const DEFAULT_KEY_LIMIT: BucketLimit = { requests_per_second: 50, burst: 200 };
/**
 * Per account, across all its keys and sessions: twice a key's, so one busy key is never held
 * back by the account bucket, while keys minted at will (they are self-service) stop multiplying
 * the account's rate.
 */
export const DEFAULT_ACCOUNT_LIMIT: BucketLimit = { requests_per_second: 100, burst: 400 };
export const DEFAULT_QUEUE_CLASS_LIMITS: Readonly<Record<QueueClass, BucketLimit>> = {
  interactive: { requests_per_second: 1000, burst: 2000 },
  deep: { requests_per_second: 250, burst: 500 },
  enterprise: { requests_per_second: 1000, burst: 2000 },
};

export const limitsConfigSchema = z.strictObject({
  /** Applies to each API key on its own, across queue classes. */
  key: bucketLimitSchema.default(DEFAULT_KEY_LIMIT),
  /** Applies to each account, shared by all its keys and sessions. */
  account: bucketLimitSchema.default(DEFAULT_ACCOUNT_LIMIT),
  /** Applies to each queue class, shared by every key using it. */
  queue_classes: z.strictObject({
    interactive: bucketLimitSchema.default(DEFAULT_QUEUE_CLASS_LIMITS.interactive),
    deep: bucketLimitSchema.default(DEFAULT_QUEUE_CLASS_LIMITS.deep),
    enterprise: bucketLimitSchema.default(DEFAULT_QUEUE_CLASS_LIMITS.enterprise),
  }).default(DEFAULT_QUEUE_CLASS_LIMITS),
});
export type LimitsConfig = z.infer<typeof limitsConfigSchema>;
/** What a caller may pass: any part left out takes its default. */
export type LimitsInput = z.input<typeof limitsConfigSchema>;

/** A bucket as the algorithm uses it: the emission interval and the tolerance, in milliseconds. */
export interface BucketParams {
  intervalMs: number;
  /** burst × interval: how far ahead of now the bucket's theoretical arrival time may run. */
  toleranceMs: number;
}

export function bucketParams(limit: BucketLimit): BucketParams {
  const intervalMs = 1000 / limit.requests_per_second;
  return { intervalMs, toleranceMs: intervalMs * limit.burst };
}

export interface ResolvedLimits {
  config: LimitsConfig;
  key: BucketParams;
  account: BucketParams;
  queueClasses: ReadonlyMap<QueueClass, BucketParams>;
}

/** Validates (throws a ZodError naming the field) and fills in the defaults. */
export function resolveLimits(input: LimitsInput = {}): ResolvedLimits {
  const config = limitsConfigSchema.parse(input);
  return {
    config,
    key: bucketParams(config.key),
    account: bucketParams(config.account),
    queueClasses: new Map(QUEUE_CLASSES.map((c) => [c, bucketParams(config.queue_classes[c])])),
  };
}
