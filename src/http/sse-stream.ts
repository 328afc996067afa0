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
 *
 * Events are written one event-loop turn later (see afterTurn), all of one turn in one write:
 * a streamed token arrives on the event loop between two decode steps of the engine, and the
 * engine queues its next step in a setImmediate of that same turn (decode-sequences-together.ts).
 * Written at once, each stream's socket write (a syscall that, on loopback, also runs the
 * client's TCP receive) sat between the sampled token and the next decode step; written a turn
 * later, it runs while llama.cpp decodes. The bytes are the same, sent microseconds later; the
 * end of the stream writes what is pending first, in order.
 */
export class LazySseStream {
  readonly #reply: FastifyReply;
  #stream: ServerResponse | undefined;
  /** Events not written yet (see afterTurn). */
  #pending = '';
  readonly #flush = (): void => {
    const text = this.#pending;
    this.#pending = '';
    if (text !== '' && this.#stream !== undefined && !this.#stream.destroyed && !this.#stream.writableEnded) this.#stream.write(text);
  };

  constructor(reply: FastifyReply) {
    this.#reply = reply;
  }

  get opened(): boolean {
    return this.#stream !== undefined;
  }

  send(data: unknown): void {
    this.#write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** A named event (`event:` line), as the Responses API streams each event under its type. */
  sendEvent(event: string, data: unknown): void {
    this.#write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream without the `[DONE]` sentinel (the Responses API sends none). */
  end(): void {
    this.#end('');
  }

  error(error: ApiError): void {
    this.send(openAIErrorBody(error));
    this.done();
  }

  done(): void {
    this.#end('data: [DONE]\n\n');
  }

  #write(text: string): void {
    this.#open();
    if (this.#pending === '') afterTurn(this.#flush);
    this.#pending += text;
  }

  /** What is pending and `last` in the stream's final write. */
  #end(last: string): void {
    const stream = this.#open();
    const text = this.#pending + last;
    this.#pending = '';
    if (text === '') stream.end();
    else stream.end(text);
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

/** Callbacks for the next turn, and whether that turn is scheduled. */
let nextTurn: (() => void)[] = [];
let turnScheduled = false;

/**
 * Runs `fn` in the event loop's next turn, after the setImmediate callbacks queued in this one:
 * a setImmediate queued from a setImmediate callback runs in the next iteration's check phase,
 * and libuv does not block in between while one is queued. One pair of immediates serves every
 * callback of a turn.
 */
function afterTurn(fn: () => void): void {
  nextTurn.push(fn);
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(() => setImmediate(() => {
    const due = nextTurn;
    nextTurn = [];
    turnScheduled = false;
    for (const run of due) run();
  }));
}
