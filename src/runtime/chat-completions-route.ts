import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { refuseUnsupported, toChatMessages, toChatOptions } from '../openai/chat-request.ts';
import { chatCompletion, chatHead, chatStreamShape } from '../openai/chat-response.ts';
import { localContextInChat, refuseLocalContext } from './local-context-guard.ts';
import { markedLocalContext } from '../mcp/local-context-marker.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { requestBody } from '../openai/request-body.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { chatCompletionRequestSchema } from '../openai/openai-schemas.ts';
import { samplingFrom } from '../openai/sampling-from.ts';
import { retrieveForChat } from '../spaces/chat-retrieval.ts';
import type { RetrievalExtension } from '../spaces/retrieval-extension.ts';
import { chooseReranker } from '../spaces/space-reranker.ts';
import type { SpaceLibrary } from '../spaces/space-types.ts';

export interface ChatRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  fingerprint: string;
  /** Knowledge spaces for `spaces: [...]` retrieval; absent, a request naming spaces is refused. */
  spaces?: SpaceLibrary | undefined;
}

export async function chatCompletionsRoute(app: FastifyInstance, options: ChatRouteOptions): Promise<void> {
  app.post('/chat/completions', { config: { job: 'chat' } }, async (request, reply) => {
    const body = requestBody(chatCompletionRequestSchema, request.body);
    refuseUnsupported(body);
    let messages = toChatMessages(body.messages);
    const chatOptions = toChatOptions(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => localContextInChat(body) ?? markedLocalContext(request.headers));
    let retrieval: { svc_retrieval: RetrievalExtension } | undefined;
    if (body.retrieval != null && body.spaces == null) throw ApiError.invalidRequest('retrieval applies to the spaces a request names: send spaces too.', 'retrieval');
    if (body.spaces != null) {
      if (options.spaces === undefined) throw ApiError.unsupported('spaces', 'Knowledge spaces are not available here.');
      const found = await retrieveForChat(options.spaces, messages, {
        spaces: body.spaces, topK: body.retrieval?.top_k ?? undefined, mode: body.retrieval?.mode ?? undefined,
        reranker: (choice) => chooseReranker(options.models, choice),
      });
      messages = found.messages;
      retrieval = { svc_retrieval: found.extension };
      if (found.extension.status === 'retrieval_unavailable') {
        // The failure class the contract names; the cause stays in this log, never in the answer.
        request.log.warn({ failure_class: 'retrieval_unavailable', spaces: found.extension.spaces, err: found.failure }, 'retrieval unavailable: answering without sources');
        // The job log reports the class too; the turn is still answered, so it is not a failed job.
        request.failure = { type: 'retrieval_unavailable', answered: true };
      }
    }
    const head = chatHead(model.id, options.fingerprint);
    const sampling = samplingFrom(body, body.max_completion_tokens ?? body.max_tokens);

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(messages, { ...sampling, ...chatOptions, ...run }),
      body.stream === true ? { includeUsage: body.stream_options?.include_usage === true, shape: chatStreamShape(head, retrieval) } : undefined,
    );
    if (results === undefined) return reply;
    return chatCompletion(head, results, retrieval);
  });
}
