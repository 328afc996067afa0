import type { FastifyInstance } from 'fastify';
import type { ChatMessage, ModelRegistry } from '../inference/language-model.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { toOpenAIUsage } from '../openai/openai-usage.ts';
import { localContextInHistory, localContextInResponse, refuseLocalContext } from './local-context-guard.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { responseRequestSchema } from '../openai/openai-schemas.ts';
import { requestBody } from '../openai/request-body.ts';
import { ResponseBuilder } from '../openai/response-builder.ts';
import type { ResponseStore } from '../openai/response-store.ts';
import { refuseStateful, toInputMessages, toResponseOptions, toResponseSettings, toResponsesError } from '../openai/responses-request.ts';
import { samplingFrom } from '../openai/sampling-from.ts';
import { keepResponse, recallStored } from '../openai/stored-conversation.ts';

export interface ResponsesRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  /** Where `store: true` responses are kept (response-store.ts); absent, the endpoint is stateless. */
  store?: ResponseStore | undefined;
}

/**
 * `POST /v1/responses`: OpenAI's Responses API over the same engines as chat completions, whole
 * or streamed as events. With a store, `store` defaults to true as at OpenAI: the response is
 * kept (before its last byte is sent, so a client may retrieve it at once), and
 * `previous_response_id` continues a stored one; see responses-request.ts for what is refused.
 */
export async function responsesRoute(app: FastifyInstance, options: ResponsesRouteOptions): Promise<void> {
  const store = options.store;
  app.post('/responses', { config: { job: 'responses' } }, async (request, reply) => {
    const body = requestBody(responseRequestSchema, request.body);
    refuseStateful(body, 'http', store !== undefined);
    const previousId = body.previous_response_id ?? null;
    const history = previousId === null || store === undefined ? [] : recallStored(store, previousId);
    const instructions: ChatMessage[] = body.instructions != null && body.instructions !== '' ? [{ role: 'system', content: body.instructions }] : [];
    const messages = [...instructions, ...toInputMessages(body.input, history)];
    const chatOptions = toResponseOptions(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => localContextInResponse(body) ?? localContextInHistory(history));
    const sampling = samplingFrom(body, body.max_output_tokens);
    const keep = store !== undefined && body.store !== false
      ? keepResponse(store, body.input, previousId, (error) => request.log.error({ err: error }, 'could not store the response'))
      : undefined;
    const response = new ResponseBuilder(toResponseSettings(body, model, sampling, keep !== undefined), keep);

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(messages, { ...sampling, ...chatOptions, ...run }).catch((error: unknown) => {
        throw toResponsesError(error);
      }),
      body.stream === true ? { includeUsage: true, shape: response.streamShape() } : undefined,
    );
    if (results === undefined) return reply;
    return response.complete(results[0]!, toOpenAIUsage(results));
  });
}
