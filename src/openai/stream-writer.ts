import type { FastifyReply } from 'fastify';
import type { GenerationPart } from '../inference/language-model.ts';
import type { ApiError } from '../shared/api-error.ts';
import { toApiError } from '../http/openai-error-handler.ts';
import { LazySseStream } from '../http/sse-stream.ts';
import type { OpenAIFinishReason } from './openai-finish-reason.ts';
import type { OpenAIUsage } from './openai-usage.ts';
import { SseEvents, type StreamShape } from './stream-shape.ts';

/** How a finished stream ends: its usage chunk (when asked for) and the end of the stream. */
export interface StreamEnd {
  usage: OpenAIUsage;
  /** Whether the usage chunk is sent (`stream_options.include_usage` locally; always on the hosted tier). */
  includeUsage: boolean;
  /**
   * Runs after the finish chunks and before the usage chunk: the hosted tier bills the request
   * here, so the stream's last chunk can carry the evidence of a charge already stored. Its
   * fields join the usage chunk. When it throws, the stream ends with its error instead.
   */
  beforeUsage?: (() => Promise<Readonly<Record<string, unknown>>>) | undefined;
}

/**
 * One streamed OpenAI answer, written in its endpoint's shape: each choice's start chunk before
 * its first part, the parts, the finish chunks, the usage chunk and the end (`[DONE]` unless the
 * shape says otherwise), or an error once the stream is open. The local routes (through
 * runGeneration) and the hosted chat route write their streams through it, so both faces send
 * the same chunks. The stream opens lazily (LazySseStream): until the first chunk an error is
 * still an ordinary HTTP status.
 */
export class StreamWriter {
  readonly #sse: LazySseStream;
  readonly #shape: StreamShape;
  readonly #started = new Set<number>();

  constructor(reply: FastifyReply, shape: StreamShape) {
    this.#sse = new LazySseStream(reply);
    this.#shape = shape;
  }

  /** Whether anything was written: after that the answer is a 200 and errors go in the stream. */
  get opened(): boolean {
    return this.#sse.opened;
  }

  /** One generated part of choice `index` (empty text is no chunk). */
  part(index: number, part: GenerationPart): void {
    if (part.type === 'text-delta' && part.text === '') return;
    this.#emit(index, () => this.#shape.part(index, part));
  }

  /** Choice `index` finished: its finish chunk (its start first, for a choice that produced nothing). */
  finish(index: number, reason: OpenAIFinishReason): void {
    this.#emit(index, () => this.#shape.finish(index, reason));
  }

  /** The usage chunk, with the fields a face adds to it. */
  usage(usage: OpenAIUsage, extension?: Readonly<Record<string, unknown>>): void {
    this.#write(this.#shape.usage(usage, extension));
  }

  /** Ends a stream whose choices finished: the hook, the usage chunk when asked for, the end. */
  async complete(end: StreamEnd): Promise<void> {
    let extension: Readonly<Record<string, unknown>> | undefined;
    if (end.beforeUsage !== undefined) {
      try {
        extension = await end.beforeUsage();
      } catch (error) {
        this.error(toApiError(error));
        return;
      }
    }
    if (end.includeUsage) this.usage(end.usage, extension);
    this.#end();
  }

  /** Ends an open stream with an error: the shape's error events, or `data: {error}` and `[DONE]`. */
  error(error: ApiError): void {
    if (this.#shape.error === undefined) {
      this.#sse.error(error);
      return;
    }
    this.#write(this.#shape.error(error));
    this.#end();
  }

  /**
   * Chunks made before (a stored answer replayed), as a whole stream ending with `[DONE]`
   * unless `doneSentinel` is false; SseEvents go under their event names (Anthropic's events).
   */
  static replay(reply: FastifyReply, chunks: Iterable<unknown>, options: { doneSentinel?: boolean } = {}): void {
    const sse = new LazySseStream(reply);
    for (const chunk of chunks) {
      if (chunk instanceof SseEvents) for (const { event, data } of chunk.events) sse.sendEvent(event, data);
      else sse.send(chunk);
    }
    if (options.doneSentinel === false) sse.end();
    else sse.done();
  }

  // The chunk is made after the start is sent: a shape that numbers its events (Responses)
  // numbers the start first.
  #emit(index: number, chunk: () => unknown): void {
    if (!this.#started.has(index)) {
      this.#started.add(index);
      if (this.#shape.start !== undefined) this.#write(this.#shape.start(index));
    }
    const made = chunk();
    if (made !== undefined) this.#write(made);
  }

  #write(chunk: unknown): void {
    if (chunk instanceof SseEvents) for (const { event, data } of chunk.events) this.#sse.sendEvent(event, data);
    else this.#sse.send(chunk);
  }

  #end(): void {
    if (this.#shape.doneSentinel === false) this.#sse.end();
    else this.#sse.done();
  }
}
