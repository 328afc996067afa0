import { ApiError } from '../../shared/api-error.ts';

/** One backend tried and given up on, with the stable reason recorded as `fallback_reason`. */
export interface FailedAttempt {
  backend: string;
  reason: string;
  /**
   * Joules of work the backend did before it was given up on: the engine, past the latency
   * ceiling, had already counted its prompt and evaluates it whatever the abort says. Billed.
   */
  joules?: number;
}

/**
 * Every candidate backend failed before producing output. 503 (retryable, with Retry-After)
 * when each failure was the kind that passes (unreachable, overloaded, rate-limited, too slow);
 * 502 when one was a backend answering wrongly. The message names backends and reasons only,
 * never an upstream's own words (a 5xx does not echo internals).
 */
export class AllBackendsFailedError extends ApiError {
  readonly attempts: readonly FailedAttempt[];

  constructor(attempts: readonly FailedAttempt[], cause?: unknown) {
    const transient = attempts.length > 0 && attempts.every((a) => isTransient(a.reason));
    super({
      status: transient ? 503 : 502,
      type: 'server_error',
      code: 'hosted_route_unavailable',
      message: `No backend could serve this request: ${attempts.map((a) => `${a.backend} (${a.reason})`).join(', ')}.`,
      ...(transient ? { retryAfterSeconds: 1 } : {}),
      cause,
    });
    this.name = 'AllBackendsFailedError';
    this.attempts = attempts;
  }
}

const TRANSIENT_REASONS = new Set([
  'backend_error:node_registry_unavailable',
  'latency_ceiling',
  'backend_error:upstream_unavailable',
  'backend_error:upstream_timeout',
  'backend_error:upstream_overloaded',
  'backend_error:rate_limit_exceeded',
  'backend_error:model_overloaded',
  'backend_error:server_shutting_down',
]);

/** A dead or missing node passes like an unreachable upstream: `node_failed:<node>:<code>` is as transient as its code. */
function isTransient(reason: string): boolean {
  if (reason === 'no_live_node') return true;
  const node = /^node_failed:[^:]+:(.+)$/.exec(reason);
  return TRANSIENT_REASONS.has(node === null ? reason : `backend_error:${node[1]}`);
}
