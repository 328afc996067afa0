import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';
import { drainRequest, LINGER_MS, sendApiError, toApiError } from '../http/openai-error-handler.ts';

/** Anthropic's error envelope: `{type: "error", error: {type, message}}`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/**
 * Anthropic's error types by HTTP status (its errors page). A busy daemon's 503 becomes
 * Anthropic's 529 `overloaded_error`, the status its clients know as "try again later" (the
 * official SDK retries it, and `Retry-After` is kept).
 */
const TYPE_BY_STATUS = new Map<number, string>([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [504, 'timeout_error'],
  [529, 'overloaded_error'],
]);

/** The status an error is answered with on the Anthropic routes. */
export function anthropicStatus(error: ApiError): number {
  return error.status === 503 ? 529 : error.status;
}

/**
 * The one place an ApiError becomes Anthropic's envelope. svc's stable `code` is kept in the
 * message's wording only where it already is; a 5xx message is the ApiError's own (already
 * generic for internal errors, see ApiError.internal).
 */
export function anthropicErrorBody(error: ApiError): AnthropicErrorBody {
  const status = anthropicStatus(error);
  const type = TYPE_BY_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: error.message } };
}

/** Sends `error` in Anthropic's envelope, with its headers (Retry-After on 429/529). */
export function sendAnthropicError(reply: FastifyReply, error: ApiError): FastifyReply {
  const status = anthropicStatus(error);
  const answered = status === error.status ? error : new ApiError({ ...error.toOptions(), status });
  return sendApiError(reply, answered, anthropicErrorBody(error));
}

/**
 * The Anthropic routes' error handler and not-found handler, for the plugin that holds them:
 * every error on those routes (the body parser's, the guards' on onRequest, the route's own)
 * is mapped by the same toApiError as the OpenAI routes, then written in Anthropic's envelope.
 */
export function installAnthropicErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    // As on the OpenAI routes: read the rest of a refused upload, so the client sees the 413.
    if (apiError.status === 413 && !request.raw.readableEnded) await drainRequest(request, LINGER_MS);
    if (apiError.status === 500) request.log.error({ err: error instanceof ApiError && error.cause !== undefined ? error.cause : error }, apiError.message);
    return sendAnthropicError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendAnthropicError(reply, ApiError.notFound(`No route for ${request.method} ${truncateInput(request.url.split('?')[0] ?? '')}.`, 'unknown_route')),
  );
}
