import type { FastifyRequest } from 'fastify';
import type { ChatMessage, ChatOptions } from '../../inference/language-model.ts';
import { refuseUnsupported, toChatMessages, toChatOptions } from '../../openai/chat-request.ts';
import { chatCompletionRequestSchema } from '../../openai/openai-schemas.ts';
import { requestBody } from '../../openai/request-body.ts';
import { samplingFrom } from '../../openai/sampling-from.ts';
import { ValidatedBody } from '../../http/validated-body.ts';
import { ApiError } from '../../shared/api-error.ts';
import { parseRouteHeaders } from '../routing/route-headers.ts';
import { requireHostedEntitlement } from '../require-key.ts';
import { idempotencyKeyOf, requestHash } from './idempotency.ts';

/**
 * A hosted generation request once it is known to be entitled and well formed, in the engine's
 * terms: what every later step (plan, hold, run, charge) reads, whichever API shape it came in
 * (chat completions here, Anthropic's Messages in hosted/messages/).
 */
export interface ChatIntake {
  /** The hosted model id asked for. */
  model: string;
  messages: ChatMessage[];
  /** Sampling, tools and output shape for the executor. */
  options: Omit<ChatOptions, 'signal' | 'onPart'>;
  /** The client's own completion cap, if it set one (the Joule reservation is sized on it). */
  maxTokens: number | undefined;
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
 * What every face reads the same way: the route headers and the Idempotency-Key with the
 * fingerprint it binds. `endpoint` names a face other than chat completions in the fingerprint,
 * so one key can never replay one API's stored answer on another (a small chat body can also be
 * a valid Messages body).
 */
export function routeIntake(request: FastifyRequest, endpoint?: string): Pick<ChatIntake, 'headers' | 'idempotencyKey' | 'hash'> {
  const headers = parseRouteHeaders(request.headers);
  const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
  // Only a request with an Idempotency-Key is ever compared with another (replay, duplicate).
  const raw = rawBodyOf(request);
  const hash = idempotencyKey === undefined ? '' : requestHash(endpoint === undefined ? raw : { endpoint, body: raw }, { ...headers });
  return { headers, idempotencyKey, hash };
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
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const options = { ...samplingFrom(body, maxTokens), ...chatOptions };
  return { model: body.model, messages, options, maxTokens, ...routeIntake(request), stream: body.stream === true };
}
