import type { HostedPlugin } from '../hosted-plugin.ts';
import { hostedMessagesRoutes } from '../messages/hosted-messages-route.ts';
import { chatFace } from './chat-face.ts';
import { readChatRequest } from './chat-intake.ts';
import { addChatLimitHeaders } from './chat-limits.ts';
import { HostedPipeline, type ChatStore, type HostedChatOptions } from './hosted-pipeline.ts';

export type { ChatStore, HostedChatOptions } from './hosted-pipeline.ts';

/**
 * `POST /chat/completions` on the hosted tier: the local route's request shape and chunks, run
 * through the hosted pipeline (hosted-pipeline.ts). Anthropic's `POST /messages` (and
 * `/messages/count_tokens`) are mounted beside it on the same pipeline, in a scope of their own
 * that answers errors in Anthropic's envelope.
 */
export function hostedChatPlugin(options: HostedChatOptions): HostedPlugin<ChatStore> {
  return async (scope, context) => {
    const pipeline = new HostedPipeline(options, context.store, context.routes);
    addChatLimitHeaders(scope, pipeline.limits.defaultClass);

    // The key alone: the backstop take comes first in the handler, with the request's queue class.
    scope.post('/chat/completions', { preHandler: context.authenticateKey }, async (request, reply) =>
      pipeline.handle(request, reply, (r) => ({ intake: readChatRequest(r), face: chatFace })));

    await scope.register(hostedMessagesRoutes(pipeline, context));
  };
}
