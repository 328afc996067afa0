import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ApiErrorOptions } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';
import { drainRequest, LINGER_MS, sendApiError } from '../http/openai-error-handler.ts';

/**
 * The hosted tier's error: an ApiError (so the shared pieces — body parser, charset guard,
 * draining — throw into the same handler) whose code must be one the hosted docs document,
 * because every answer points at its section (`docs_url`).
 */
export class HostedError extends ApiError {
  constructor(options: ApiErrorOptions) {
    super(options);
    this.name = 'HostedError';
  }
}

/** Where the served docs live: `docs_url` is this path plus `#<code>`. */
export const HOSTED_DOCS_PATH = '/docs/hosted';

/**
 * Every code a hosted error may carry, with its usual status and type. The docs page must have
 * an element with each code as its id (test/hosted/hosted-error.test.ts checks the served page).
 * A code outside this map (a shared piece's new code) is answered with the `errors` section's
 * address rather than a dead anchor.
 */
export const HOSTED_ERROR_CODES: ReadonlyMap<string, { status: number; type: string }> = new Map([
  ['svc_api_key_required', { status: 401, type: 'authentication_error' }],
  ['svc_api_key_revoked', { status: 401, type: 'authentication_error' }],
  ['svc_account_disabled', { status: 401, type: 'authentication_error' }],
  ['session_required', { status: 401, type: 'authentication_error' }],
  ['sign_in_link_invalid', { status: 401, type: 'authentication_error' }],
  ['node_token_invalid', { status: 401, type: 'authentication_error' }],
  ['nodes_unavailable', { status: 503, type: 'server_error' }],
  ['insufficient_quota', { status: 402, type: 'insufficient_quota' }],
  ['hosted_entitlement_required', { status: 402, type: 'insufficient_quota' }],
  ['joule_allowance_exhausted', { status: 402, type: 'insufficient_quota' }],
  ['enterprise_plan_required', { status: 403, type: 'permission_error' }],
  ['account_mismatch', { status: 403, type: 'permission_error' }],
  ['cross_origin_request_refused', { status: 403, type: 'permission_error' }],
  ['cors_origin_not_allowed', { status: 403, type: 'permission_error' }],
  ['cors_header_not_allowed', { status: 403, type: 'permission_error' }],
  ['invalid_request', { status: 400, type: 'invalid_request_error' }],
  ['invalid_json', { status: 400, type: 'invalid_request_error' }],
  ['json_too_complex', { status: 400, type: 'invalid_request_error' }],
  ['invalid_content_length', { status: 400, type: 'invalid_request_error' }],
  ['invalid_http_request', { status: 400, type: 'invalid_request_error' }],
  ['unknown_route', { status: 404, type: 'invalid_request_error' }],
  ['api_key_not_found', { status: 404, type: 'invalid_request_error' }],
  ['evidence_not_found', { status: 404, type: 'invalid_request_error' }],
  ['invalid_idempotency_key', { status: 400, type: 'invalid_request_error' }],
  ['idempotency_key_in_progress', { status: 409, type: 'invalid_request_error' }],
  ['key_limit_reached', { status: 409, type: 'invalid_request_error' }],
  ['idempotency_key_reused', { status: 422, type: 'invalid_request_error' }],
  ['method_not_allowed', { status: 405, type: 'invalid_request_error' }],
  // Route planning's refusals (routing/route-refused-error.ts) and the limiter's second code.
  ['invalid_route_header', { status: 400, type: 'invalid_request_error' }],
  ['unknown_execution_policy', { status: 400, type: 'invalid_request_error' }],
  ['unknown_privacy_tier', { status: 400, type: 'invalid_request_error' }],
  ['model_not_found', { status: 404, type: 'invalid_request_error' }],
  ['model_not_on_policy', { status: 400, type: 'invalid_request_error' }],
  ['no_backend_for_privacy_tier', { status: 400, type: 'invalid_request_error' }],
  ['joule_ceiling_too_low', { status: 400, type: 'invalid_request_error' }],
  ['queue_class_busy', { status: 429, type: 'rate_limit_error' }],
  ['request_timeout', { status: 408, type: 'invalid_request_error' }],
  ['expectation_failed', { status: 417, type: 'invalid_request_error' }],
  ['request_too_large', { status: 413, type: 'invalid_request_error' }],
  ['chunk_extensions_too_large', { status: 413, type: 'invalid_request_error' }],
  ['unsupported_media_type', { status: 415, type: 'invalid_request_error' }],
  ['unsupported_charset', { status: 415, type: 'invalid_request_error' }],
  ['invalid_problem', { status: 422, type: 'invalid_request_error' }],
  ['data_boundary_violation', { status: 422, type: 'invalid_request_error' }],
  ['headers_too_large', { status: 431, type: 'invalid_request_error' }],
  ['rate_limit_exceeded', { status: 429, type: 'rate_limit_error' }],
  ['internal_error', { status: 500, type: 'server_error' }],
  ['rag_job_runner_not_live', { status: 501, type: 'server_error' }],
  ['upstream_unavailable', { status: 502, type: 'server_error' }],
  ['hosted_route_unavailable', { status: 502, type: 'server_error' }],
  ['ledger_unavailable', { status: 503, type: 'server_error' }],
  ['server_busy', { status: 503, type: 'server_error' }],
  ['server_shutting_down', { status: 503, type: 'server_error' }],
  // The solve endpoints' own codes (src/quantum), answered in the hosted envelope.
  ['unknown_solver', { status: 400, type: 'invalid_request_error' }],
  ['unsupported_parameter', { status: 400, type: 'invalid_request_error' }],
  ['batch_too_large', { status: 413, type: 'invalid_request_error' }],
  ['problem_too_large', { status: 413, type: 'invalid_request_error' }],
  ['solve_time_budget_exceeded', { status: 422, type: 'invalid_request_error' }],
  ['solve_queue_full', { status: 429, type: 'rate_limit_error' }],
  ['substrate_unavailable', { status: 503, type: 'server_error' }],
  // Solve jobs (src/quantum/jobs).
  ['unknown_parameter', { status: 400, type: 'invalid_request_error' }],
  ['invalid_client_job_id', { status: 400, type: 'invalid_request_error' }],
  ['solve_job_not_found', { status: 404, type: 'invalid_request_error' }],
  ['client_job_id_conflict', { status: 409, type: 'invalid_request_error' }],
  ['solve_job_cancelled', { status: 409, type: 'invalid_request_error' }],
  ['solve_job_queue_full', { status: 429, type: 'rate_limit_error' }],
  ['solve_queue_unavailable', { status: 503, type: 'server_error' }],
  // vendor-eagle through a configured provider (src/quantum/hardware/hardware-errors.ts)
  ['substrate_unsupported', { status: 422, type: 'invalid_request_error' }],
  ['circuit_not_transpilable', { status: 422, type: 'invalid_request_error' }],
  ['hardware_queue_full', { status: 429, type: 'rate_limit_error' }],
  ['substrate_unreachable', { status: 502, type: 'server_error' }],
  ['substrate_auth_failed', { status: 502, type: 'server_error' }],
  ['substrate_provider_error', { status: 502, type: 'server_error' }],
  ['substrate_job_failed', { status: 502, type: 'server_error' }],
  ['substrate_timeout', { status: 504, type: 'server_error' }],
  ['shutting_down', { status: 503, type: 'server_error' }],
]);

/** The section of the served docs that explains `code`. */
export function docsUrlFor(code: string): string {
  return `${HOSTED_DOCS_PATH}#${HOSTED_ERROR_CODES.has(code) ? code : 'errors'}`;
}

export interface HostedErrorBody {
  error: { message: string; type: string; code: string; docs_url: string; retry_after_seconds?: number };
}

/** A 5xx says what happened in fixed words, never the message of what was thrown inside. */
const SERVER_MESSAGES: ReadonlyMap<number, string> = new Map([
  [500, 'Internal server error.'],
  [502, 'The upstream hosted route is unavailable.'],
  [503, 'The hosted service is unavailable right now; retry later.'],
]);

/** Fixed words for the hardware substrate's 502/504 answers on the hosted tier. */
const HARDWARE_MESSAGES: ReadonlyMap<string, string> = new Map([
  ['substrate_unreachable', "The hardware provider could not be reached. Retry later or use substrate 'local'."],
  ['substrate_auth_failed', "The hardware provider refused this service's credentials. Retry later or use substrate 'local'."],
  ['substrate_provider_error', "The hardware provider answered with an error. Retry later or use substrate 'local'."],
  ['substrate_job_failed', "The hardware job failed on the provider. Retry later or use substrate 'local'."],
  ['substrate_timeout', "The hardware job did not finish in time and was cancelled. Retry later or use substrate 'local'."],
]);

/** Whether the hosted answer hides this error's own message (logged instead). */
export function hidesHardwareDetail(error: ApiError): boolean {
  return error.status !== 503 && HARDWARE_MESSAGES.has(error.code);
}

/**
 * Anything thrown on a hosted route, as the error to answer. Fastify's own client errors
 * (malformed JSON, oversized or mistyped bodies, validation) become their 4xx; anything
 * unknown is an opaque 500.
 */
export function toHostedError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as Partial<FastifyError> | undefined;
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_json', message: 'Malformed JSON body.' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HostedError({ status: 413, type: 'invalid_request_error', code: 'request_too_large', message: 'The request body is larger than this endpoint accepts.' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new HostedError({ status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: 'Send the body as application/json.' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_content_length', message: 'Content-Length does not match the body.' });
    default:
      break;
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    return new HostedError({ status, type: 'invalid_request_error', code: 'invalid_request', message: truncateInput(fe?.message ?? 'Bad request', 300) });
  }
  return ApiError.internal(error);
}

export function hostedErrorBody(error: ApiError): HostedErrorBody {
  return {
    error: {
      message: publicMessage(error),
      type: error.type,
      code: error.code,
      docs_url: docsUrlFor(error.code),
      ...(error.retryAfterSeconds !== undefined && error.status === 429 ? { retry_after_seconds: Math.max(1, Math.ceil(error.retryAfterSeconds)) } : {}),
    },
  };
}

/**
 * svc's own deliberate 5xx answers (documented codes: shutting down, runner not live) keep their
 * words; any other 5xx gets fixed words, so nothing internal reaches the client.
 */
function publicMessage(error: ApiError): string {
  if (error.status < 500) return error.message;
  // The hardware provider's origin, job id and raw reason are the operator's business, not the customer's (kept in the log).
  const hardware = HARDWARE_MESSAGES.get(error.code);
  if (hardware !== undefined && error.status !== 503) return hardware;
  if (HOSTED_ERROR_CODES.has(error.code) && error.code !== 'internal_error') return error.message;
  return SERVER_MESSAGES.get(error.status) ?? 'Internal server error.';
}

export function sendHostedError(reply: FastifyReply, error: ApiError): FastifyReply {
  return sendApiError(reply, error, hostedErrorBody(error));
}

/**
 * The one error handler of the hosted app, with the 404/405 answers: every hosted error body is
 * `{error:{message,type,code,docs_url}}`.
 */
export function installHostedErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toHostedError(error);
    if (apiError.status === 413 && !request.raw.readableEnded) await drainRequest(request, LINGER_MS);
    if (apiError.status === 500) request.log.error({ err: error instanceof ApiError && error.cause !== undefined ? error.cause : error }, apiError.message);
    else if (hidesHardwareDetail(apiError)) request.log.warn({ code: apiError.code }, apiError.message);
    return sendHostedError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split(/[?#]/, 1)[0] ?? '';
    // The router is shared by every plugin, so the root instance sees every route.
    const allowed = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'].filter((method) => method !== request.method && app.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0) {
      const headers = { Allow: [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ') };
      return sendHostedError(reply, new HostedError({ status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: `${request.method} is not allowed on ${truncateInput(path)}; use ${allowed.join(' or ')}.`, headers }));
    }
    return sendHostedError(reply, new HostedError({ status: 404, type: 'invalid_request_error', code: 'unknown_route', message: `No route for ${request.method} ${truncateInput(path)}.` }));
  });
}
