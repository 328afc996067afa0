import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';
import type { FinishReason } from './language-model.ts';
import type { StructuredFault } from './structured-reply-check.ts';
import type { UpstreamErrorBody } from './upstream-schemas.ts';

/**
 * Upstream failures in our error envelope. The rule: a status the client can act on keeps
 * the upstream's status (400, 404, 413, 422, 429 with its Retry-After, 503); a failure that
 * is svc's or the upstream's own becomes a 502 that names the upstream, never a status that
 * blames the client. 401/403 in particular mean svc's key for the upstream is wrong — the
 * client's key (which svc never forwards) is not — so they are 502 too. Messages quote the
 * upstream's own message cut short and with svc's key removed, should an upstream echo it.
 */
export interface UpstreamErrorContext {
  /** The upstream's configured name. */
  name: string;
  /** The environment variable its key comes from, named in hints (never the key). */
  apiKeyEnv?: string | undefined;
  /** Strings that must never appear in a message (the key). */
  secrets: readonly string[];
}

/** The most characters of an upstream's message that svc repeats. */
const MAX_UPSTREAM_MESSAGE = 300;

/** Statuses that tell the client something true about its own request, kept as they are. */
const CLIENT_STATUSES = new Set([400, 404, 413, 422, 429]);

const DEFAULT_CODES = new Map<number, string>([
  [400, 'invalid_request'],
  [404, 'not_found'],
  [413, 'request_too_large'],
  [422, 'invalid_request'],
  [429, 'rate_limit_exceeded'],
  [503, 'upstream_overloaded'],
]);

/** Removes every secret from `text` (an upstream may echo a key back in its error). */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('[redacted]');
  return out;
}

function safeCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[a-zA-Z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}

/** The human-readable message of an upstream error body, whichever dialect it speaks. */
export function upstreamErrorMessage(body: UpstreamErrorBody | undefined, fallback: string): string {
  const candidates: unknown[] = [];
  if (body !== undefined) {
    const error = body.error;
    if (typeof error === 'string') candidates.push(error);
    else if (error != null) candidates.push(error.message);
    candidates.push(body.message, body.detail);
  }
  for (const c of candidates) {
    if (typeof c === 'string' && c.trim() !== '') return c.trim();
    // FastAPI's validation `detail` is an array of objects: worth showing in short.
    if (c !== undefined && c !== null && typeof c === 'object') return JSON.stringify(c);
  }
  return fallback;
}

function upstreamCode(body: UpstreamErrorBody | undefined): string | undefined {
  if (body === undefined) return undefined;
  const error = body.error;
  if (error != null && typeof error === 'object') return safeCode(error.code) ?? safeCode(error.type);
  return safeCode(body.code);
}

function upstreamParam(body: UpstreamErrorBody | undefined): string | null {
  const error = body?.error;
  if (error == null || typeof error !== 'object') return null;
  const param = (error as { param?: unknown }).param;
  return typeof param === 'string' && param.length <= 200 ? param : null;
}

/** `Retry-After` in seconds, from either form RFC 9110 allows (delay-seconds or an HTTP date). */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function quoteUpstream(ctx: UpstreamErrorContext, message: string): string {
  return truncateInput(scrubSecrets(message, ctx.secrets), MAX_UPSTREAM_MESSAGE);
}

/** An upstream answered with an HTTP error status before any output. */
export function upstreamHttpError(
  ctx: UpstreamErrorContext,
  status: number,
  body: UpstreamErrorBody | undefined,
  retryAfter: string | string[] | undefined,
): ApiError {
  if (status === 401 || status === 403) {
    const hint = ctx.apiKeyEnv !== undefined
      ? `check the key in the environment variable ${ctx.apiKeyEnv} (api_key_env)`
      : 'it needs a key: set api_key_env in its configuration';
    // The upstream's message is left out on purpose: some echo part of the key they refused.
    return new ApiError({
      status: 502, type: 'server_error', code: 'upstream_auth_failed',
      message: `Upstream '${ctx.name}' refused svc's credentials (HTTP ${status}); ${hint}. Your own API key was not sent to it.`,
    });
  }
  const message = quoteUpstream(ctx, upstreamErrorMessage(body, `HTTP ${status}`));
  const retry = retryAfterSeconds(retryAfter);
  if (CLIENT_STATUSES.has(status) || status === 503) {
    return new ApiError({
      status,
      type: status === 429 ? 'rate_limit_error' : status === 503 ? 'server_error' : 'invalid_request_error',
      code: upstreamCode(body) ?? DEFAULT_CODES.get(status) ?? 'upstream_error',
      param: status === 400 || status === 422 ? upstreamParam(body) : status === 404 && upstreamCode(body) === 'model_not_found' ? 'model' : null,
      message: `Upstream '${ctx.name}': ${message}`,
      ...(retry !== undefined && (status === 429 || status === 503) ? { retryAfterSeconds: retry } : {}),
    });
  }
  if (status === 504 || status === 408) {
    return new ApiError({ status: 504, type: 'server_error', code: 'upstream_timeout', message: `Upstream '${ctx.name}' timed out (HTTP ${status}): ${message}` });
  }
  return new ApiError({ status: 502, type: 'server_error', code: 'upstream_error', message: `Upstream '${ctx.name}' failed (HTTP ${status}): ${message}` });
}

/** An error the upstream reported inside a stream that had already started. */
export function upstreamStreamError(ctx: UpstreamErrorContext, body: UpstreamErrorBody): ApiError {
  const message = quoteUpstream(ctx, upstreamErrorMessage(body, 'an error'));
  return new ApiError({ status: 502, type: 'server_error', code: upstreamCode(body) === 'server_shutting_down' ? 'upstream_unavailable' : 'upstream_error', message: `Upstream '${ctx.name}' reported an error mid-stream: ${message}` });
}

/** The upstream sent something that is not what the protocol says (bad JSON, wrong shape). */
export function malformedUpstream(ctx: UpstreamErrorContext, detail: string): ApiError {
  return new ApiError({
    status: 502, type: 'server_error', code: 'upstream_invalid_response',
    message: `Upstream '${ctx.name}' sent an invalid response: ${truncateInput(scrubSecrets(detail, ctx.secrets), MAX_UPSTREAM_MESSAGE)}`,
  });
}

/**
 * The upstream said its reply was complete (`stop`, `tool_calls`) but the JSON asked for does not
 * parse or breaks the schema (check-upstream-reply.ts). A 502 like any invalid upstream answer,
 * with its own code so a client can tell it from a protocol error and retry; the reply itself is
 * not repeated (only the end of an incomplete value, where it stopped).
 */
export function upstreamStructuredOutputInvalid(ctx: UpstreamErrorContext, finishReason: FinishReason, fault: StructuredFault): ApiError {
  const problem = fault.kind === 'invalid' ? `it does not match the schema (${fault.issue})` : fault.issue;
  return new ApiError({
    status: 502, type: 'server_error', code: 'upstream_structured_output_invalid',
    message: `Upstream '${ctx.name}' said its ${fault.what} was complete (finish_reason ${finishReason}) but ${truncateInput(scrubSecrets(problem, ctx.secrets), MAX_UPSTREAM_MESSAGE)}; svc does not pass it on as a normal reply.`,
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | undefined;
  const code = e?.code ?? e?.cause?.code ?? e?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A transport failure: the connection could not be made (502 `upstream_unavailable`), the
 * upstream went silent for longer than its first-byte timeout (504 `upstream_timeout`), or the
 * connection broke while the answer was arriving (502 `upstream_unavailable`).
 */
export function upstreamNetworkError(ctx: UpstreamErrorContext, error: unknown): ApiError {
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new ApiError({
      status: 504, type: 'server_error', code: 'upstream_timeout', cause: error,
      message: `Upstream '${ctx.name}' did not answer in time (its first_byte timeout); the request was cancelled.`,
    });
  }
  const what = code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE'
    ? 'closed the connection before the answer was complete'
    : code === 'UND_ERR_CONNECT_TIMEOUT'
      ? 'could not be connected to in time (its connect timeout)'
      : 'cannot be reached';
  return new ApiError({
    status: 502, type: 'server_error', code: 'upstream_unavailable', cause: error,
    message: `Upstream '${ctx.name}' ${what}${code !== undefined && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : ''}.`,
  });
}
