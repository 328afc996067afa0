import type { QueueClass } from './queue-classes.ts';
import type { BackpressureState, LimitDecision, LimitName, RefusedDecision } from './rate-limiter.ts';

/**
 * The contract's headers on rate limits and on upstream unavailability: `Retry-After`
 * (whole seconds), `x-svc-queue-class`, `x-svc-backpressure-state`. Pure functions, so the
 * HTTP layer sets the same headers on a 429 and on a 502/503 `server_error`.
 */
export const QUEUE_CLASS_HEADER = 'x-svc-queue-class';
export const BACKPRESSURE_HEADER = 'x-svc-backpressure-state';

/** Retry-After on a `server_error` whose cause gives none (the routing error sets 1 s when transient). */
export const DEFAULT_UPSTREAM_RETRY_AFTER_SECONDS = 1;

/** The queue-class and backpressure headers for any response; `Retry-After` too when refused. */
export function rateLimitHeaders(decision: LimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    [QUEUE_CLASS_HEADER]: decision.queueClass,
    [BACKPRESSURE_HEADER]: decision.backpressure,
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}

export interface RateLimitRefusal {
  status: 429;
  type: 'rate_limit_error';
  code: RateLimitCode;
  message: string;
  headers: Record<string, string>;
  /** Fields added to the error envelope's `error` object beside message/type/code/docs_url. */
  bodyExtras: { retry_after_seconds: number };
}

/** `rate_limit_exceeded`: this key is too fast (the caller can fix it); `queue_class_busy`: the class is full for everyone. */
export type RateLimitCode = 'rate_limit_exceeded' | 'queue_class_busy';

const CODES: ReadonlyMap<LimitName, RateLimitCode> = new Map([
  ['key', 'rate_limit_exceeded'],
  ['account', 'rate_limit_exceeded'],
  ['queue_class', 'queue_class_busy'],
]);

export function rateLimitRefusal(decision: RefusedDecision): RateLimitRefusal {
  const seconds = decision.retryAfterSeconds;
  const after = `retry after ${seconds} second${seconds === 1 ? '' : 's'}`;
  return {
    status: 429,
    type: 'rate_limit_error',
    code: CODES.get(decision.limit) ?? 'rate_limit_exceeded',
    message: decision.limit === 'key'
      ? `This API key has reached its request rate limit; ${after}.`
      : decision.limit === 'account'
        ? `This account has reached its request rate limit (shared by all its keys); ${after}.`
        : `The ${decision.queueClass} queue class is at its request rate limit; ${after}.`,
    headers: rateLimitHeaders(decision),
    bodyExtras: { retry_after_seconds: seconds },
  };
}

export interface UpstreamUnavailableInput {
  queueClass: QueueClass;
  /** From the request's limiter decision; `normal` when the request was never limited. */
  backpressure: BackpressureState;
  /** The routing error's own Retry-After when it has one. */
  retryAfterSeconds?: number | undefined;
}

/** The same headers on `server_error` (upstream route unavailable). */
export function upstreamUnavailableHeaders(input: UpstreamUnavailableInput): Record<string, string> {
  const seconds = input.retryAfterSeconds !== undefined && Number.isFinite(input.retryAfterSeconds) && input.retryAfterSeconds >= 1
    ? Math.ceil(input.retryAfterSeconds)
    : DEFAULT_UPSTREAM_RETRY_AFTER_SECONDS;
  return {
    'retry-after': String(seconds),
    [QUEUE_CLASS_HEADER]: input.queueClass,
    [BACKPRESSURE_HEADER]: input.backpressure,
  };
}
