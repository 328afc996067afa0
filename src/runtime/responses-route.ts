import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { toOpenAIUsage } from '../openai/openai-usage.ts';
import { localContextInResponse, refuseLocalContext } from './local-context-guard.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { responseRequestSchema } from '../openai/openai-schemas.ts';
import { requestBody } from '../openai/request-body.ts';
import { ResponseBuilder } from '../openai/response-builder.ts';
import { refuseStateful, toResponseMessages, toResponseOptions, toResponseSettings, toResponsesError } from '../openai/responses-request.ts';
import { samplingFrom } from '../openai/sampling-from.ts';

export interface ResponsesRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
}

/**
 * `POST /v1/responses`: OpenAI's Responses API over the same engines as chat completions,
 * stateless (see responses-request.ts for what that refuses), whole or streamed as events.
 */
export async function responsesRoute(app: FastifyInstance, options: ResponsesRouteOptions): Promise<void> {
  app.post('/responses', { config: { job: 'responses' } }, async (request, reply) => {
    const body = requestBody(responseRequestSchema, request.body);
    refuseStateful(body);
    const messages = toResponseMessages(body);
    const chatOptions = toResponseOptions(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => localContextInResponse(body));
    const sampling = samplingFrom(body, body.max_output_tokens);
    const response = new ResponseBuilder(toResponseSettings(body, model, sampling));

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
