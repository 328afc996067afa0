import type { QueueClass } from '../route-config.ts';

/**
 * SEAM for the backstop rate limiter (part L, src/hosted/limits/): the chat route asks it once
 * per request, per key and per queue class, after the route is planned and before any backend
 * is called. Until that limiter is wired in, `svc hosted` runs without one (no request is
 * refused for rate); tests pass their own to check the 429 answer.
 */
export interface ChatRateLimiter {
  take(input: { accountId: string; keyId: string; queueClass: QueueClass }): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }>;
}

/** `x-svc-backpressure-state` values, named as the capacity descriptor's backpressure classes. */
export type BackpressureState = 'ok' | 'rate_limited' | 'upstream_unavailable';
