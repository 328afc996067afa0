import type { FastifyReply } from 'fastify';
import type { FinishReason, GenerateOptions, GenerateResult, GenerationPart } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { toApiError } from '../http/openai-error-handler.ts';
import { CLIENT_CLOSED_REQUEST, logRequest, noteFailure } from '../http/request-log.ts';
import { LazySseStream } from '../http/sse-stream.ts';

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

export type OpenAIFinishReason = Exclude<FinishReason, 'abort'>;

export function openAIFinishReason(reason: FinishReason): OpenAIFinishReason {
  return reason === 'abort' ? 'stop' : reason;
}

/**
 * Several named SSE events from one shape call: the Responses API sends each event under its
 * type (`event: response.output_text.delta`), and one generated part can open an output item,
 * a content part and carry a delta at once.
 */
export class SseEvents {
  readonly events: readonly { event: string; data: unknown }[];
  constructor(events: readonly { event: string; data: unknown }[]) {
    this.events = events;
  }
}

/** Chunks a streamed generation emits, in the endpoint's own object shape (a chunk, or SseEvents). */
export interface StreamShape {
  /** The first chunk of choice `index` (chat sends the assistant role here). */
  start?(index: number): unknown;
  /** The chunk for one generated part; undefined sends none for it (an endpoint without tools). */
  part(index: number, part: GenerationPart): unknown;
  finish(index: number, reason: OpenAIFinishReason): unknown;
  usage(usage: OpenAIUsage): unknown;
  /** The events for an error once the stream is open; default: `data: {error}`, then `[DONE]`. */
  error?(error: ApiError): unknown;
  /** Whether the stream ends with `data: [DONE]` (chat and completions do; the default). */
  doneSentinel?: boolean;
}

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
  const sse = stream === undefined ? undefined : new LazySseStream(ctx.reply);
  const started = new Set<number>();
  const write = (chunk: unknown): void => {
    if (sse === undefined) return;
    if (chunk instanceof SseEvents) for (const { event, data } of chunk.events) sse.sendEvent(event, data);
    else sse.send(chunk);
  };
  const end = (): void => {
    if (stream?.shape.doneSentinel === false) sse?.end();
    else sse?.done();
  };
  // The chunk is made after the start is sent: a shape that numbers its events (Responses)
  // numbers the start first.
  const emit = (index: number, chunk: () => unknown): void => {
    if (sse === undefined || stream === undefined) return;
    if (!started.has(index)) {
      started.add(index);
      if (stream.shape.start !== undefined) write(stream.shape.start(index));
    }
    const made = chunk();
    if (made !== undefined) write(made);
  };

  const settled = await Promise.allSettled(
    Array.from({ length: choices }, (_, i) =>
      generate(i, {
        signal,
        ...(stream !== undefined
          ? {
              onPart: (part: GenerationPart) => {
                if (part.type === 'text-delta' && part.text === '') return;
                emit(i, () => stream.shape.part(i, part));
              },
            }
          : {}),
      }).then(
        (result) => {
          if (stream !== undefined && result.finishReason !== 'abort') emit(i, () => stream.shape.finish(i, openAIFinishReason(result.finishReason)));
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
    if (sse === undefined || !sse.opened) throw error;
    const apiError = toApiError(error);
    // The answer is already 200: the job log learns of the failure here.
    noteFailure(ctx.reply.request, apiError);
    if (apiError.status === 500) ctx.reply.log.error({ err: error }, 'generation failed mid-stream');
    if (ctx.reply.raw.destroyed) return undefined;
    if (stream?.shape.error === undefined) {
      sse.error(apiError);
    } else {
      write(stream.shape.error(apiError));
      end();
    }
    return undefined;
  };
  if (ctx.shutdownSignal.aborted) return fail(shutdownError());
  if (disconnected.aborted || ctx.reply.raw.destroyed) {
    logRequest(ctx.reply.request, CLIENT_CLOSED_REQUEST, ctx.reply.elapsedTime);
    // Nobody is listening: tell Fastify not to answer.
    if (sse === undefined || !sse.opened) ctx.reply.hijack();
    return undefined;
  }
  if (failure !== undefined) return fail(failure.reason);
  if (sse === undefined || stream === undefined) return results;
  if (stream.includeUsage) write(stream.shape.usage(toOpenAIUsage(results)));
  end();
  return undefined;
}
