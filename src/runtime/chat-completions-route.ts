import type { FastifyInstance } from 'fastify';
import type { ChatMessage, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { newId } from '../shared/new-id.ts';
import { lookupModel } from './model-lookup.ts';
import { requestBody } from './request-body.ts';
import { openAIFinishReason, runGeneration, toOpenAIUsage } from './generation-run.ts';
import { chatCompletionRequestSchema, type ChatCompletionRequest } from './openai-schemas.ts';
import { samplingFrom } from './sampling-from.ts';

export interface ChatRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  fingerprint: string;
}

/** Flattens OpenAI messages to plain role/text turns, refusing what a text model cannot take. */
export function toChatMessages(messages: ChatCompletionRequest['messages']): ChatMessage[] {
  return messages.map((message, i) => {
    if (message.role === 'tool' || message.role === 'function') {
      throw ApiError.invalidRequest(`messages[${i}]: '${message.role}' messages need tool calling, which svc does not offer yet.`, `messages[${i}].role`, 'unsupported_value');
    }
    const role = message.role === 'developer' ? 'system' : message.role;
    const content = message.content;
    if (content === null || content === undefined) {
      if (role !== 'assistant') throw ApiError.invalidRequest(`messages[${i}].content is required for '${message.role}' messages.`, `messages[${i}].content`);
      return { role, content: '' };
    }
    if (typeof content === 'string') return { role, content };
    const texts = content.map((part, j) => {
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      throw ApiError.invalidRequest(
        `messages[${i}].content[${j}] is a ${quoteInput(part.type)} part; the local models take text parts only.`,
        `messages[${i}].content[${j}].type`, 'unsupported_value',
      );
    });
    return { role, content: texts.join('\n') };
  });
}

function refuseUnsupported(body: ChatCompletionRequest): void {
  if ((body.n ?? 1) !== 1) throw ApiError.unsupported('n', 'n must be 1: svc generates one choice per chat request.');
  if (body.logprobs === true || body.top_logprobs != null) throw ApiError.unsupported('logprobs', 'logprobs are not available from the local runtime yet.');
  if ((body.tools?.length ?? 0) > 0 || (body.functions?.length ?? 0) > 0) throw ApiError.unsupported('tools', 'Tool calling is not available from the local runtime yet.');
  if (body.response_format != null && body.response_format.type !== 'text') throw ApiError.unsupported('response_format', `response_format ${quoteInput(body.response_format.type)} is not available yet; only 'text'.`);
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0) throw ApiError.unsupported('logit_bias', 'logit_bias is not available from the local runtime yet.');
  if (body.modalities != null && body.modalities.some((m) => m !== 'text')) throw ApiError.unsupported('modalities', 'The local models produce text only.');
  if (body.audio != null) throw ApiError.unsupported('audio', 'Audio output is not available from the local runtime.');
  if (body.web_search_options != null) throw ApiError.unsupported('web_search_options', 'Web search is not available: the local runtime opens no outbound connections.');
}

export async function chatCompletionsRoute(app: FastifyInstance, options: ChatRouteOptions): Promise<void> {
  app.post('/chat/completions', async (request, reply) => {
    const body = requestBody(chatCompletionRequestSchema, request.body);
    refuseUnsupported(body);
    const messages = toChatMessages(body.messages);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    const id = newId('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const head = { id, created, model: model.id, system_fingerprint: options.fingerprint };
    const sampling = samplingFrom(body, body.max_completion_tokens ?? body.max_tokens);
    const chunk = (choice: object) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] });

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(messages, { ...sampling, ...run }),
      body.stream === true
        ? {
            includeUsage: body.stream_options?.include_usage === true,
            shape: {
              start: () => chunk({ delta: { role: 'assistant', content: '' } }),
              text: (_i, text) => chunk({ delta: { content: text } }),
              finish: (_i, reason) => chunk({ delta: {}, finish_reason: reason }),
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
        message: { role: 'assistant', content: r.text, refusal: null },
        logprobs: null,
        finish_reason: openAIFinishReason(r.finishReason),
      })),
      usage: toOpenAIUsage(results),
    };
  });
}
