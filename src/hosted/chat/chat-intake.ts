import type { FastifyRequest } from 'fastify';
import { refuseUnsupported, toChatMessages, toChatOptions } from '../../openai/chat-request.ts';
import { chatCompletionRequestSchema } from '../../openai/openai-schemas.ts';
import { requestBody } from '../../openai/request-body.ts';
import { ValidatedBody } from '../../http/validated-body.ts';
import { ApiError } from '../../shared/api-error.ts';
import { parseRouteHeaders } from '../routing/route-headers.ts';
import { requireHostedEntitlement } from '../require-key.ts';
import { idempotencyKeyOf, requestHash } from './idempotency.ts';

/** A hosted chat request once it is known to be entitled and well formed. */
export interface ChatIntake {
  body: ReturnType<typeof chatCompletionRequestSchema.parse>;
  messages: ReturnType<typeof toChatMessages>;
  chatOptions: ReturnType<typeof toChatOptions>;
  headers: ReturnType<typeof parseRouteHeaders>;
  idempotencyKey: string | undefined;
  stream: boolean;
  /** The fingerprint an Idempotency-Key is bound to; '' without a key. */
  hash: string;
}

/** The JSON body as the client sent it (a body validated on the worker carries it). */
export function rawBodyOf(request: FastifyRequest): unknown {
  return request.body instanceof ValidatedBody ? request.body.value : request.body;
}

/**
 * The entitlement, then the body, the route headers and the Idempotency-Key, each refused
 * with its own 4xx: the checks that need nothing but the request.
 */
export function readChatRequest(request: FastifyRequest): ChatIntake {
  requireHostedEntitlement(request.hostedIdentity!);
  const body = requestBody(chatCompletionRequestSchema, request.body);
  refuseUnsupported(body);
  if (body.spaces != null || body.retrieval != null) {
    throw ApiError.unsupported(body.spaces != null ? 'spaces' : 'retrieval', 'Knowledge spaces live on your machine: send spaces to the local daemon (svc serve), not to the hosted tier.');
  }
  const messages = toChatMessages(body.messages);
  const chatOptions = toChatOptions(body);
  const headers = parseRouteHeaders(request.headers);
  const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
  // Only a request with an Idempotency-Key is ever compared with another (replay, duplicate).
  const hash = idempotencyKey === undefined ? '' : requestHash(rawBodyOf(request), { ...headers });
  return { body, messages, chatOptions, headers, idempotencyKey, stream: body.stream === true, hash };
}
