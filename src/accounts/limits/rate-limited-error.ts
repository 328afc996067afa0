import { ApiError } from '../../shared/api-error.ts';
import { rateLimitRefusal } from './rate-limit-headers.ts';
import type { RefusedDecision } from './rate-limiter.ts';

/**
 * A limiter refusal as the error the hosted error handler maps to the envelope: 429
 * `rate_limit_error` with the contract's headers; `bodyExtras` (`retry_after_seconds`) go
 * into the `error` object beside message, type, code and docs_url.
 */
export class RateLimitedError extends ApiError {
  readonly bodyExtras: { retry_after_seconds: number };
  readonly decision: RefusedDecision;

  constructor(decision: RefusedDecision) {
    const refusal = rateLimitRefusal(decision);
    super({
      status: refusal.status,
      type: refusal.type,
      code: refusal.code,
      message: refusal.message,
      retryAfterSeconds: decision.retryAfterSeconds,
      headers: refusal.headers,
    });
    this.name = 'RateLimitedError';
    this.bodyExtras = refusal.bodyExtras;
    this.decision = decision;
  }
}
