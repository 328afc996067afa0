import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { openAIFinishReason } from '../openai/openai-finish-reason.ts';
import { toOpenAIUsage } from '../openai/openai-usage.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { requestBody } from '../openai/request-body.ts';
import { completionRequestSchema, type CompletionRequest } from '../openai/openai-schemas.ts';
import { samplingFrom } from '../openai/sampling-from.ts';

export interface CompletionsRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  fingerprint: string;
}

function refuseUnsupported(body: CompletionRequest): void {
  if ((body.n ?? 1) !== 1 || (body.best_of ?? 1) !== 1) throw ApiError.unsupported('n', 'n and best_of must be 1: svc generates one completion per prompt.');
  if (body.logprobs != null && body.logprobs > 0) throw ApiError.unsupported('logprobs', 'logprobs are not available from the local runtime yet.');
  if (body.suffix != null && body.suffix !== '') throw ApiError.unsupported('suffix', 'suffix (fill-in-the-middle) is not available yet.');
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0) throw ApiError.unsupported('logit_bias', 'logit_bias is not available from the local runtime yet.');
}

/** The legacy text-completion endpoint: one choice per prompt, `index` in prompt order. */
export async function completionsRoute(app: FastifyInstance, options: CompletionsRouteOptions): Promise<void> {
  app.post('/completions', { config: { job: 'completion' } }, async (request, reply) => {
    const body = requestBody(completionRequestSchema, request.body);
    refuseUnsupported(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    const prompts = typeof body.prompt === 'string' ? [body.prompt] : body.prompt;
    const echo = body.echo === true;
    const head = { id: newId('cmpl-'), created: Math.floor(Date.now() / 1000), model: model.id, system_fingerprint: options.fingerprint };
    const chunk = (index: number, text: string, finish: string | null) => ({
      ...head, object: 'text_completion', choices: [{ index, text, logprobs: null, finish_reason: finish }],
    });
    const sampling = samplingFrom(body, body.max_tokens ?? 16);

    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      prompts.length,
      (index, run) => model.complete(prompts[index]!, { ...sampling, ...run }),
      body.stream === true
        ? {
            includeUsage: body.stream_options?.include_usage === true,
            shape: {
              ...(echo ? { start: (i: number) => chunk(i, prompts[i]!, null) } : {}),
              // Plain completions have no tools: only text parts become chunks.
              part: (i, part) => (part.type === 'text-delta' ? chunk(i, part.text, null) : undefined),
              finish: (i, reason) => chunk(i, '', reason),
              usage: (usage) => ({ ...head, object: 'text_completion', choices: [], usage }),
            },
          }
        : undefined,
    );
    if (results === undefined) return reply;
    return {
      ...head,
      object: 'text_completion',
      choices: results.map((r, index) => ({
        index,
        text: echo ? prompts[index]! + r.text : r.text,
        logprobs: null,
        finish_reason: openAIFinishReason(r.finishReason),
      })),
      usage: toOpenAIUsage(results),
    };
  });
}
