import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../shared/api-error.ts';
import { hijackReply } from '../shared/hijack-reply.ts';
import { openAIErrorBody } from './openai-error-handler.ts';

/**
 * A Server-Sent Events response that opens lazily: until the first event is written, an error
 * can still become a proper HTTP status (queue full, prompt too long); after it, errors are
 * sent as an `error` event followed by `[DONE]`, the way OpenAI streams report them.
 *
 * Events are written straight to the response (the reply is hijacked when the stream opens)
 * rather than through a stream handed to `reply.send`: the pipe in between cost 0.1–0.2 ms
 * before the first token and on every token after it (bench/inference). The headers other hooks
 * set on the reply so far (CORS, `connection: close` while draining) go out with the stream's
 * own; Fastify's onResponse hook still runs when the response finishes, so the request log
 * line is written as for any other response.
 */
export class LazySseStream {
  readonly #reply: FastifyReply;
  #stream: ServerResponse | undefined;

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

  #open(): ServerResponse {
    if (this.#stream === undefined) {
      const reply = this.#reply;
      reply
        .code(200)
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no');
      const raw = hijackReply(reply);
      raw.writeHead(200);
      this.#stream = raw;
    }
    return this.#stream;
  }
}
