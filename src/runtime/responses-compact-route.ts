import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { responseCompactRequestSchema } from '../openai/openai-schemas.ts';
import { toOpenAIUsage } from '../openai/openai-usage.ts';
import { requestBody } from '../openai/request-body.ts';
import { responsesUsage } from '../openai/response-builder.ts';
import { COMPACTION_SUMMARY_MAX_TOKENS, compactedWindow, compactionPrompt } from '../openai/response-compaction.ts';
import { toResponseMessages, toResponsesError } from '../openai/responses-request.ts';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { localContextInResponse, refuseLocalContext } from './local-context-guard.ts';

export interface ResponsesCompactRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
}

/**
 * `POST /v1/responses/compact` (Open Responses): the conversation in `input` (and
 * `instructions`) → a `response.compaction` whose `output` is the compacted window a new
 * response starts from (response-compaction.ts says what it keeps). The model writes the
 * summary, so the call costs one generation of at most COMPACTION_SUMMARY_MAX_TOKENS tokens;
 * `usage` counts it.
 */
export async function responsesCompactRoute(app: FastifyInstance, options: ResponsesCompactRouteOptions): Promise<void> {
  app.post('/responses/compact', { config: { job: 'responses' } }, async (request, reply) => {
    const body = requestBody(responseCompactRequestSchema, request.body);
    if (body.previous_response_id != null) {
      // Compaction reads only the conversation it is sent (a stored one: GET /v1/responses/{id}/input_items).
      throw ApiError.invalidRequest(
        'previous_response_id cannot be compacted: svc compacts only the conversation sent in input. Send the conversation itself in input.',
        'previous_response_id',
        'previous_response_not_found',
      );
    }
    const input = body.input ?? [];
    if (input.length === 0) throw ApiError.invalidRequest('input is empty: there is no conversation to compact.', 'input');
    const conversation = toResponseMessages({ instructions: body.instructions ?? null, input });
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => localContextInResponse({ input, tools: null }));

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(compactionPrompt(conversation), { maxTokens: COMPACTION_SUMMARY_MAX_TOKENS, ...run }).catch((error: unknown) => {
        throw toResponsesError(error);
      }),
      undefined,
    );
    if (results === undefined) return reply;
    return {
      id: newId('cmp_'),
      object: 'response.compaction',
      created_at: Math.floor(Date.now() / 1000),
      output: compactedWindow(input, results[0]!.text.trim()),
      usage: responsesUsage(toOpenAIUsage(results)),
    };
  });
}
