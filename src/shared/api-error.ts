import { truncateInput } from './quote-input.ts';

/**
 * The one error type that crosses the wire. Domain code throws an ApiError with a stable
 * `code`, an HTTP `status` and an OpenAI-style `type`; each face of svc (local runtime,
 * hosted tier) maps it to its own envelope in exactly one error handler. Errors that stay
 * inside the process are plain Errors and surface as an opaque 500 (never echoed).
 */
export interface ApiErrorOptions {
  status: number;
  type: string;
  code: string;
  message: string;
  /** The request field the error is about (OpenAI's `param`), when there is one. */
  param?: string | null;
  /** Sent as `Retry-After` (seconds) on 429/503. */
  retryAfterSeconds?: number;
  /** Extra response headers (e.g. backpressure class). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The longest message and param an error carries. Messages quote user input through
 * quote-input.ts already; this bound holds for every message, whoever wrote it.
 */
const MAX_MESSAGE_CHARS = 1000;
const MAX_PARAM_CHARS = 300;

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;

  constructor(options: ApiErrorOptions) {
    super(truncateInput(options.message, MAX_MESSAGE_CHARS), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.status = options.status;
    this.type = options.type;
    this.code = options.code;
    this.param = options.param == null ? null : truncateInput(options.param, MAX_PARAM_CHARS);
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  /** The options that rebuild this error on another thread (its cause stays here, for the log). */
  toOptions(): ApiErrorOptions {
    return {
      status: this.status, type: this.type, code: this.code, message: this.message, param: this.param, headers: this.headers,
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
    };
  }

  /** Whether a client may retry the same request later and expect it to succeed. */
  get isRetryable(): boolean {
    return this.status === 429 || this.status === 503;
  }

  static invalidRequest(message: string, param: string | null = null, code = 'invalid_request'): ApiError {
    return new ApiError({ status: 400, type: 'invalid_request_error', code, message, param });
  }

  /** An argument the API defines that svc does not offer (yet): 400 naming it. */
  static unsupported(param: string, message: string): ApiError {
    return ApiError.invalidRequest(message, param, 'unsupported_parameter');
  }

  static unprocessable(message: string, param: string | null = null, code = 'invalid_problem'): ApiError {
    return new ApiError({ status: 422, type: 'invalid_request_error', code, message, param });
  }

  static notFound(message: string, code = 'not_found', param: string | null = null): ApiError {
    return new ApiError({ status: 404, type: 'invalid_request_error', code, message, param });
  }

  static tooLarge(message: string, param: string | null = null, code = 'request_too_large'): ApiError {
    return new ApiError({ status: 413, type: 'invalid_request_error', code, message, param });
  }

  /** The opaque 500: its cause goes to the log, never to the client. */
  static internal(cause: unknown): ApiError {
    return new ApiError({ status: 500, type: 'server_error', code: 'internal_error', message: 'Internal server error.', cause });
  }

  static busy(message: string, retryAfterSeconds: number, status: 429 | 503 = 503, code = 'server_busy'): ApiError {
    return new ApiError({
      status,
      type: status === 429 ? 'rate_limit_error' : 'server_error',
      code,
      message,
      retryAfterSeconds,
    });
  }
}
