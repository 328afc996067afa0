import type { FastifyInstance } from 'fastify';
import { toEngineMessages, toToolOptions } from '../../anthropic/messages-request.ts';
import { countTokensRequestSchema } from '../../anthropic/messages-schemas.ts';
import { abortOnDisconnect } from '../../http/abort-on-disconnect.ts';
import { parseWithSchema } from '../../shared/parse-with-schema.ts';
import type { HostedContext } from '../hosted-plugin.ts';
import { requireHostedEntitlement } from '../require-key.ts';
import { parseRouteHeaders } from '../routing/route-headers.ts';
import { planRoute } from '../routing/route-planner.ts';
import { rawBodyOf } from '../chat/chat-intake.ts';
import { takeChatLimit } from '../chat/chat-limits.ts';
import type { HostedPipeline } from '../chat/hosted-pipeline.ts';
import { installHostedAnthropicErrorHandler } from './hosted-anthropic-error.ts';
import { messagesFace } from './messages-face.ts';
import { readMessagesRequest } from './messages-intake.ts';

/**
 * Anthropic's Messages API on the hosted tier, in a scope of its own (its errors in Anthropic's
 * envelope): `POST /messages` runs the hosted pipeline like chat completions (limits, key and
 * entitlement, idempotency, route plan and headers, the Joule hold, execution, signed evidence,
 * one ledger row); `POST /messages/count_tokens` counts on the backend the plan would use, and
 * is limited like any request but neither held nor billed (no ledger row: nothing was generated).
 * The key may come in `x-api-key` (require-key.ts); `anthropic-version` is accepted, whatever it says.
 */
export function hostedMessagesRoutes(pipeline: HostedPipeline, context: HostedContext<unknown>) {
  return async (scope: FastifyInstance): Promise<void> => {
    installHostedAnthropicErrorHandler(scope);

    scope.post('/messages', { preHandler: context.authenticateKey }, async (request, reply) =>
      pipeline.handle(request, reply, (r) => {
        const intake = readMessagesRequest(r);
        return { intake, face: messagesFace(intake.maxTokens) };
      }));

    scope.post('/messages/count_tokens', { preHandler: context.authenticateKey }, async (request, reply) => {
      const planned = await takeChatLimit(request, reply, pipeline.limits);
      const identity = request.hostedIdentity!;
      requireHostedEntitlement(identity);
      const body = parseWithSchema(countTokensRequestSchema, rawBodyOf(request));
      const messages = toEngineMessages(body);
      const toolOptions = toToolOptions(body);
      const headers = parseRouteHeaders(request.headers);
      const plan = planned?.model === body.model ? planned : planRoute(context.routes, { model: body.model, policy: headers.policy, privacyTier: headers.privacyTier, plan: identity.account.plan });
      reply.header('x-svc-queue-class', plan.queueClass);
      const counted = await pipeline.executor.countPrompt(plan, messages, { ...toolOptions, signal: abortOnDisconnect(reply) });
      // How the count was made, beside Anthropic's field: an upstream's is an upper bound.
      return { input_tokens: counted.tokens, svc_count: { backend: counted.backend, method: counted.exact ? 'engine_tokenizer' : 'upper_bound' } };
    });
  };
}
