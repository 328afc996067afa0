import type { FastifyInstance } from 'fastify';
import type { GenerateResult, GenerationPart, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { toChatMessages, toChatOptions } from './chat-request.ts';
import { localContextInChat, refuseLocalContext } from './local-context-guard.ts';
import { markedLocalContext } from './local-context-marker.ts';
import { lookupModel } from './model-lookup.ts';
import { requestBody } from './request-body.ts';
import { openAIFinishReason, runGeneration, toOpenAIUsage } from './generation-run.ts';
import { chatCompletionRequestSchema, type ChatCompletionRequest } from './openai-schemas.ts';
import { samplingFrom } from './sampling-from.ts';
import { retrieveForChat, type RetrievalExtension } from '../spaces/chat-retrieval.ts';
import type { SpaceLibrary } from '../spaces/space-types.ts';

export interface ChatRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  fingerprint: string;
  /** Knowledge spaces for `spaces: [...]` retrieval; absent, a request naming spaces is refused. */
  spaces?: SpaceLibrary | undefined;
}

export function refuseUnsupported(body: ChatCompletionRequest): void {
  if ((body.n ?? 1) !== 1) throw ApiError.unsupported('n', 'n must be 1: svc generates one choice per chat request.');
  if (body.logprobs === true || body.top_logprobs != null) throw ApiError.unsupported('logprobs', 'logprobs are not available from the local runtime yet.');
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0) throw ApiError.unsupported('logit_bias', 'logit_bias is not available from the local runtime yet.');
  if (body.modalities != null && body.modalities.some((m) => m !== 'text')) throw ApiError.unsupported('modalities', 'The local models produce text only.');
  if (body.audio != null) throw ApiError.unsupported('audio', 'Audio output is not available from the local runtime.');
  if (body.web_search_options != null) throw ApiError.unsupported('web_search_options', 'Web search is not available: svc has no search tool of its own (its local models cannot search, and upstream models get no web_search_options).');
}

/** The `delta` of a streamed chunk, as OpenAI streams text and tool calls. */
export function deltaOf(part: GenerationPart): object {
  switch (part.type) {
    case 'text-delta': return { content: part.text };
    case 'tool-call-start': return { tool_calls: [{ index: part.index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }] };
    case 'tool-call-delta': return { tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] };
  }
}

/** The assistant message of a whole reply: `content` is null when the model only called tools, as OpenAI sends it. */
export function messageOf(result: GenerateResult): object {
  if (result.toolCalls.length === 0) return { role: 'assistant', content: result.text, refusal: null };
  return {
    role: 'assistant',
    content: result.text === '' ? null : result.text,
    refusal: null,
    tool_calls: result.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
  };
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
      const found = await retrieveForChat(options.spaces, messages, { spaces: body.spaces, topK: body.retrieval?.top_k ?? undefined, mode: body.retrieval?.mode ?? undefined });
      messages = found.messages;
      retrieval = { svc_retrieval: found.extension };
      if (found.extension.status === 'retrieval_unavailable') {
        // The failure class the contract names; the cause stays in this log, never in the answer.
        request.log.warn({ failure_class: 'retrieval_unavailable', spaces: found.extension.spaces, err: found.failure }, 'retrieval unavailable: answering without sources');
        // The job log reports the class too; the turn is still answered, so it is not a failed job.
        request.failure = { type: 'retrieval_unavailable', answered: true };
      }
    }
    const id = newId('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const head = { id, created, model: model.id, system_fingerprint: options.fingerprint };
    const sampling = samplingFrom(body, body.max_completion_tokens ?? body.max_tokens);
    const chunk = (choice: object) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] });

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(messages, { ...sampling, ...chatOptions, ...run }),
      body.stream === true
        ? {
            includeUsage: body.stream_options?.include_usage === true,
            shape: {
              start: () => chunk({ delta: { role: 'assistant', content: '' } }),
              part: (_i, part) => chunk({ delta: deltaOf(part) }),
              finish: (_i, reason) => ({ ...chunk({ delta: {}, finish_reason: reason }), ...retrieval }),
              usage: (usage) => ({ ...head, object: 'chat.completion.chunk', choices: [], usage }),
            },
          }
        : undefined,
    );
    if (results === undefined) return reply;
    return {
      ...head,
      object: 'chat.completion',
      choices: results.map((r, index) => ({
        index,
        message: messageOf(r),
        logprobs: null,
        finish_reason: openAIFinishReason(r.finishReason),
      })),
      usage: toOpenAIUsage(results),
      ...retrieval,
    };
  });
}
