import type { FastifyReply } from 'fastify';
import type { GenerateOptions, GenerateResult, GenerationPart } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { toApiError } from '../http/openai-error-handler.ts';
import { CLIENT_CLOSED_REQUEST, logRequest, noteFailure } from '../http/request-log.ts';
import { openAIFinishReason } from './openai-finish-reason.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import type { StreamShape } from './stream-shape.ts';
import { StreamWriter } from './stream-writer.ts';

export interface GenerationContext {
  reply: FastifyReply;
  /** Aborts when the daemon shuts down. */
  shutdownSignal: AbortSignal;
}

function abortCause(ctx: GenerationContext, failed: boolean): string {
  if (ctx.shutdownSignal.aborted) return 'shutdown';
  return failed ? 'cancelled_after_error' : 'client_disconnected';
}

/** Records, for the request log, how many tokens were generated and how generation ended. */
function record(ctx: GenerationContext, results: readonly GenerateResult[], failed: boolean): void {
  const finishes = new Set(results.map((r) => r.finishReason));
  ctx.reply.request.generation = {
    completionTokens: results.reduce((n, r) => n + r.usage.completionTokens, 0),
    finish: finishes.has('abort') ? abortCause(ctx, failed) : [...finishes].join(','),
  };
}

function shutdownError(): ApiError {
  return new ApiError({
    status: 503, type: 'server_error', code: 'server_shutting_down',
    message: 'The daemon is shutting down; the generation was stopped.', retryAfterSeconds: 1,
  });
}

/**
 * Runs one generation per choice (in parallel: the engine batches them as sequences) and
 * either returns the results or streams them as SSE. A client disconnect aborts generation
 * (logged as 499); a shutdown aborts it and ends open streams with an error event and
 * `[DONE]`; a choice that fails stops its siblings, so a refused request leaves nothing running.
 */
export async function runGeneration(
  ctx: GenerationContext,
  choices: number,
  generate: (index: number, options: Pick<GenerateOptions, 'signal' | 'onPart'>) => Promise<GenerateResult>,
  stream: { shape: StreamShape; includeUsage: boolean } | undefined,
): Promise<GenerateResult[] | undefined> {
  const disconnected = abortOnDisconnect(ctx.reply);
  const siblings = new AbortController();
  const signal = AbortSignal.any([disconnected, ctx.shutdownSignal, siblings.signal]);
  const writer = stream === undefined ? undefined : new StreamWriter(ctx.reply, stream.shape);

  const settled = await Promise.allSettled(
    Array.from({ length: choices }, (_, i) =>
      generate(i, {
        signal,
        ...(writer !== undefined ? { onPart: (part: GenerationPart) => writer.part(i, part) } : {}),
      }).then(
        (result) => {
          if (result.finishReason !== 'abort') writer?.finish(i, openAIFinishReason(result.finishReason));
          return result;
        },
        (error: unknown) => {
          siblings.abort(error);
          throw error;
        },
      ),
    ),
  );
  const results = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  record(ctx, results, failure !== undefined);

  // Why generation ended decides the answer, in this order: shutdown, disconnect, failure.
  const fail = (error: unknown): undefined => {
    // Before the first byte an error is still an ordinary HTTP error response.
    if (writer === undefined || !writer.opened) throw error;
    const apiError = toApiError(error);
    // The answer is already 200: the job log learns of the failure here.
    noteFailure(ctx.reply.request, apiError);
    if (apiError.status === 500) ctx.reply.log.error({ err: error }, 'generation failed mid-stream');
    if (ctx.reply.raw.destroyed) return undefined;
    writer.error(apiError);
    return undefined;
  };
  if (ctx.shutdownSignal.aborted) return fail(shutdownError());
  if (disconnected.aborted || ctx.reply.raw.destroyed) {
    logRequest(ctx.reply.request, CLIENT_CLOSED_REQUEST, ctx.reply.elapsedTime);
    // Nobody is listening: tell Fastify not to answer.
    if (writer === undefined || !writer.opened) ctx.reply.hijack();
    return undefined;
  }
  if (failure !== undefined) return fail(failure.reason);
  if (writer === undefined || stream === undefined) return results;
  await writer.complete({ usage: toOpenAIUsage(results), includeUsage: stream.includeUsage });
  return undefined;
}
