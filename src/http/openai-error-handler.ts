import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';

/** The OpenAI error envelope the local runtime answers with. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * Maps anything thrown by a route to the OpenAI envelope. Fastify's own client errors
 * (bad JSON, body too large, wrong content type) become their 4xx; anything unknown is a 500
 * whose message is generic, so internals never leak to the client (they go to the log).
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as Partial<FastifyError> | undefined;
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ApiError.invalidRequest(`Malformed JSON body: ${fe.message ?? 'could not parse'}`, null, 'invalid_json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ApiError.tooLarge('Request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError({
        status: 415,
        type: 'invalid_request_error',
        code: 'unsupported_media_type',
        message: 'Send the body as application/json.',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ApiError.invalidRequest('Content-Length does not match the body.', null, 'invalid_content_length');
    default:
      break;
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    return new ApiError({ status, type: 'invalid_request_error', code: 'invalid_request', message: fe?.message ?? 'Bad request' });
  }
  return ApiError.internal(error);
}

export function openAIErrorBody(error: ApiError): OpenAIErrorBody {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

/** Sends an error with its status and headers; the body is OpenAI's envelope unless another is given (hosted). */
export function sendApiError(reply: FastifyReply, error: ApiError, body: unknown = openAIErrorBody(error)): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).send(body);
}

/** How long a refused upload is read and discarded before the connection closes anyway. */
export const LINGER_MS = 5_000;

/** Reads and discards the rest of a refused upload, so the client sees the answer rather than a reset. */
export function drainRequest(request: FastifyRequest, maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, maxMs);
    request.raw.once('end', done).once('close', done).once('error', done).resume();
  });
}

export function installOpenAIErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.status === 413 && !request.raw.readableEnded) {
      // The upload is refused from its Content-Length before it is read. Answering and closing
      // with unread data in the socket makes the kernel send RST, and the client loses the 413;
      // so read and discard the rest first (a lingering close), for at most LINGER_MS.
      await drainRequest(request, LINGER_MS);
    }
    // 500 bodies stay generic; the cause goes to the log for the operator. Deliberate answers
    // (503 busy, substrate unavailable) are already in the request log line.
    if (apiError.status === 500) request.log.error({ err: error instanceof ApiError && error.cause !== undefined ? error.cause : error }, apiError.message);
    return sendApiError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, ApiError.notFound(`No route for ${request.method} ${truncateInput(request.url.split('?')[0] ?? '')}.`, 'unknown_route')),
  );
}
