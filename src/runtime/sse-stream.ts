import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../shared/api-error.ts';
import { openAIErrorBody } from './openai-error-handler.ts';

/**
 * A Server-Sent Events response that opens lazily: until the first event is written, an error
 * can still become a proper HTTP status (queue full, prompt too long); after it, errors are
 * sent as an `error` event followed by `[DONE]`, the way OpenAI streams report them.
 */
export class LazySseStream {
  readonly #reply: FastifyReply;
  #stream: PassThrough | undefined;

  constructor(reply: FastifyReply) {
    this.#reply = reply;
  }

  get opened(): boolean {
    return this.#stream !== undefined;
  }

  send(data: unknown): void {
    this.#open().write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** A named event (`event:` line), as the Responses API streams each event under its type. */
  sendEvent(event: string, data: unknown): void {
    this.#open().write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream without the `[DONE]` sentinel (the Responses API sends none). */
  end(): void {
    this.#open().end();
  }

  error(error: ApiError): void {
    this.send(openAIErrorBody(error));
    this.done();
  }

  done(): void {
    const stream = this.#open();
    stream.end('data: [DONE]\n\n');
  }

  #open(): PassThrough {
    if (this.#stream === undefined) {
      this.#stream = new PassThrough();
      void this.#reply
        .code(200)
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(this.#stream);
    }
    return this.#stream;
  }
}
