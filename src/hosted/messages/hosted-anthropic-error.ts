import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { anthropicErrorBody, anthropicStatus } from '../../anthropic/anthropic-errors.ts';
import { drainRequest, LINGER_MS, sendApiError } from '../../http/openai-error-handler.ts';
import { ApiError } from '../../shared/api-error.ts';
import { hostedErrorBody, toHostedError } from '../hosted-error.ts';

/** Anthropic's envelope with the hosted contract's fields inside `error`. */
export interface HostedAnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; code: string; docs_url: string; retry_after_seconds?: number };
}

/**
 * A hosted error on the Anthropic routes: Anthropic's envelope (`{type: "error", error: {type,
 * message}}`, the type by status as anthropic-errors.ts maps it, so the official SDK raises its
 * own error classes), plus what every hosted error carries (the contract's envelope): `code`,
 * `docs_url`, and `retry_after_seconds` on a 429. The message is the hosted one (a 5xx never
 * echoes an internal message).
 */
export function hostedAnthropicErrorBody(error: ApiError): HostedAnthropicErrorBody {
  const hosted = hostedErrorBody(error).error;
  return { type: 'error', error: { ...hosted, type: anthropicErrorBody(error).error.type } };
}

/**
 * The error handler of the hosted Anthropic routes' scope: every error on them (the key check's,
 * the limiter's, the body parser's, the pipeline's) is mapped by the hosted tier's toHostedError,
 * answered with Anthropic's status (503 → 529 `overloaded_error`, Retry-After kept) and body.
 */
export function installHostedAnthropicErrorHandler(scope: FastifyInstance): void {
  scope.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toHostedError(error);
    if (apiError.status === 413 && !request.raw.readableEnded) await drainRequest(request, LINGER_MS);
    if (apiError.status === 500) request.log.error({ err: error instanceof ApiError && error.cause !== undefined ? error.cause : error }, apiError.message);
    const status = anthropicStatus(apiError);
    const answered = status === apiError.status ? apiError : new ApiError({ ...apiError.toOptions(), status });
    return sendApiError(reply, answered, hostedAnthropicErrorBody(apiError));
  });
}
