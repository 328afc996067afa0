import type { FastifyReply } from 'fastify';
import type { FinishReason, GenerateOptions, GenerateResult } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { abortOnDisconnect } from './abort-on-disconnect.ts';
import { toApiError } from './openai-error-handler.ts';
import { CLIENT_CLOSED_REQUEST, logRequest } from './request-log.ts';
import { LazySseStream } from './sse-stream.ts';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function toOpenAIUsage(results: readonly GenerateResult[]): OpenAIUsage {
  const prompt = results.reduce((n, r) => n + r.usage.promptTokens, 0);
  const completion = results.reduce((n, r) => n + r.usage.completionTokens, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function openAIFinishReason(reason: FinishReason): 'stop' | 'length' {
  return reason === 'length' ? 'length' : 'stop';
}

/** Chunks a streamed generation emits, in the endpoint's own object shape. */
export interface StreamShape {
  /** The first chunk of choice `index` (chat sends the assistant role here). */
  start?(index: number): unknown;
  text(index: number, text: string): unknown;
  finish(index: number, reason: 'stop' | 'length'): unknown;
  usage(usage: OpenAIUsage): unknown;
}

export interface GenerationContext {
  reply: FastifyReply;
  /** Aborts when the daemon shuts down. */
  shutdownSignal: AbortSignal;
}

/** Records, for the request log, how many tokens were generated and how generation ended. */
function record(ctx: GenerationContext, results: readonly GenerateResult[]): void {
  const finishes = new Set(results.map((r) => r.finishReason));
  ctx.reply.request.generation = {
    completionTokens: results.reduce((n, r) => n + r.usage.completionTokens, 0),
    finish: finishes.has('abort') ? (ctx.shutdownSignal.aborted ? 'shutdown' : 'client_disconnected') : [...finishes].join(','),
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
 * either returns the results or streams them as SSE. A client disconnect aborts generation;
 * a shutdown aborts it and ends open streams with an error event and `[DONE]`.
 */
export async function runGeneration(
  ctx: GenerationContext,
  choices: number,
  generate: (index: number, options: Pick<GenerateOptions, 'signal' | 'onText'>) => Promise<GenerateResult>,
  stream: { shape: StreamShape; includeUsage: boolean } | undefined,
): Promise<GenerateResult[] | undefined> {
  const signal = AbortSignal.any([abortOnDisconnect(ctx.reply), ctx.shutdownSignal]);
  if (stream === undefined) {
    const results = await Promise.all(Array.from({ length: choices }, (_, i) => generate(i, { signal })));
    record(ctx, results);
    if (ctx.shutdownSignal.aborted) throw shutdownError();
    if (ctx.reply.raw.destroyed) logRequest(ctx.reply.request, CLIENT_CLOSED_REQUEST, ctx.reply.elapsedTime);
    return results;
  }

  const sse = new LazySseStream(ctx.reply);
  const started = new Set<number>();
  const emit = (index: number, chunk: unknown): void => {
    if (!started.has(index)) {
      started.add(index);
      if (stream.shape.start !== undefined) sse.send(stream.shape.start(index));
    }
    sse.send(chunk);
  };
  let results: GenerateResult[];
  try {
    results = await Promise.all(
      Array.from({ length: choices }, (_, i) =>
        generate(i, { signal, onText: (text) => { if (text !== '') emit(i, stream.shape.text(i, text)); } }).then((result) => {
          if (result.finishReason !== 'abort') emit(i, stream.shape.finish(i, openAIFinishReason(result.finishReason)));
          return result;
        }),
      ),
    );
  } catch (error) {
    // Before the first byte the error is still an ordinary HTTP error response.
    if (!sse.opened) throw error;
    const apiError = toApiError(error);
    if (apiError.status >= 500) ctx.reply.log.error({ err: error }, 'generation failed mid-stream');
    if (!ctx.reply.raw.destroyed) sse.error(apiError);
    return undefined;
  }
  record(ctx, results);
  if (ctx.shutdownSignal.aborted) {
    if (!sse.opened) throw shutdownError();
    sse.error(shutdownError());
    return undefined;
  }
  if (ctx.reply.raw.destroyed) {
    logRequest(ctx.reply.request, CLIENT_CLOSED_REQUEST, ctx.reply.elapsedTime);
    return undefined;
  }
  if (stream.includeUsage) sse.send(stream.shape.usage(toOpenAIUsage(results)));
  sse.done();
  return undefined;
}
