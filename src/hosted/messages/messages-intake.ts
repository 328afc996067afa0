import type { FastifyRequest } from 'fastify';
import { refuseUnsupported, toEngineMessages, toSampling, toToolOptions } from '../../anthropic/messages-request.ts';
import { messagesRequestSchema } from '../../anthropic/messages-schemas.ts';
import { parseWithSchema } from '../../shared/parse-with-schema.ts';
import { rawBodyOf, routeIntake, type ChatIntake } from '../chat/chat-intake.ts';
import { requireHostedEntitlement } from '../require-key.ts';

/**
 * A hosted Messages request in engine terms, for the hosted pipeline: the entitlement, then the
 * body (translated by anthropic/ exactly as the local route does: turns, tools, tool_choice,
 * sampling, stop sequences), the route headers and the Idempotency-Key. The fingerprint names
 * the endpoint, so a key used on chat completions is never replayed here.
 */
export function readMessagesRequest(request: FastifyRequest): ChatIntake & { maxTokens: number } {
  requireHostedEntitlement(request.hostedIdentity!);
  const body = parseWithSchema(messagesRequestSchema, rawBodyOf(request));
  refuseUnsupported(body);
  const messages = toEngineMessages(body);
  const options = { ...toSampling(body), ...toToolOptions(body) };
  return { model: body.model, messages, options, maxTokens: body.max_tokens, ...routeIntake(request, 'messages'), stream: body.stream === true };
}
