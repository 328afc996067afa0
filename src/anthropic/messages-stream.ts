import type { GenerateResult, GenerationPart } from '../inference/language-model.ts';
import type { ApiError } from '../shared/api-error.ts';
import { SseEvents, type StreamShape } from '../openai/stream-shape.ts';
import { anthropicErrorBody } from './anthropic-errors.ts';
import { anthropicStop, anthropicUsage } from './messages-reply.ts';
import { toolUseId } from './messages-request.ts';

type Event = { event: string; data: unknown };

/**
 * One streamed Message in Anthropic's event sequence, written through the same StreamWriter and
 * lazy SSE stream as chat completions (openai/stream-writer.ts, http/sse-stream.ts): each event
 * under its type, no `[DONE]`:
 *
 * `message_start` (the Message with empty content), `ping`, then per content block
 * `content_block_start` → `content_block_delta`s (`text_delta`, or `input_json_delta` for a
 * tool_use block) → `content_block_stop`, then `message_delta` (`stop_reason`, `stop_sequence`,
 * usage) and `message_stop`. An error once the stream is open is an `error` event in
 * Anthropic's envelope. The stream opens at the first generated part, so an error before it
 * (queue full, prompt too long) is still an HTTP status.
 *
 * The shape learns how generation ended from `settle` (the route calls it with the engine's
 * result before the writer finishes the stream), since Anthropic's `message_delta` names the
 * stop sequence, which the OpenAI finish reason does not carry.
 */
export class MessagesStream implements StreamShape {
  readonly doneSentinel = false;
  readonly #id: string;
  readonly #model: string;
  #maxTokens: number;
  #inputTokens = 0;
  #result: GenerateResult | undefined;
  /** The open block: its index and kind (`text`, or the tool-call index it streams). */
  #open: { index: number; kind: 'text' | number } | undefined;
  #blocks = 0;
  readonly #errorBody: (error: ApiError) => unknown;

  /** `errorBody`: the error event's data (the hosted tier adds its code, docs_url and evidence). */
  constructor(id: string, model: string, maxTokens: number, errorBody: (error: ApiError) => unknown = anthropicErrorBody) {
    this.#id = id;
    this.#model = model;
    this.#maxTokens = maxTokens;
    this.#errorBody = errorBody;
  }

  /** The prompt's size as the engine counted it before generating, for `message_start`'s usage. */
  promptCounted(tokens: number): void {
    this.#inputTokens = tokens;
  }

  /**
   * How the generation ended: read by the closing `message_delta`. `cappedAt`: the completion cap
   * the stop reason is read against, when something lower than `max_tokens` cut it (the hosted
   * tier's Joule ceiling).
   */
  settle(result: GenerateResult, cappedAt?: number): void {
    this.#result = result;
    if (cappedAt !== undefined) this.#maxTokens = cappedAt;
  }

  start(): SseEvents {
    const message = {
      id: this.#id, type: 'message', role: 'assistant', model: this.#model, content: [],
      stop_reason: null, stop_sequence: null,
      usage: anthropicUsage({ promptTokens: this.#inputTokens, completionTokens: 0 }),
    };
    return new SseEvents([{ event: 'message_start', data: { type: 'message_start', message } }, { event: 'ping', data: { type: 'ping' } }]);
  }

  part(_index: number, part: GenerationPart): SseEvents {
    const events: Event[] = [];
    if (part.type === 'text-delta') {
      if (this.#open?.kind !== 'text') this.#openBlock(events, 'text', { type: 'text', text: '' });
      events.push(this.#delta({ type: 'text_delta', text: part.text }));
    } else if (part.type === 'tool-call-start') {
      this.#openBlock(events, part.index, { type: 'tool_use', id: toolUseId(part.id), name: part.name, input: {} });
    } else if (this.#open?.kind === part.index) {
      events.push(this.#delta({ type: 'input_json_delta', partial_json: part.argumentsDelta }));
    }
    return new SseEvents(events);
  }

  finish(): SseEvents {
    const events: Event[] = [];
    this.#closeBlock(events);
    return new SseEvents(events);
  }

  /**
   * The closing events; the OpenAI usage passed in is the same count the result carries.
   * `extension` (the hosted tier's `svc_route`, `svc_outcome`) joins `message_delta`.
   */
  usage(_usage?: unknown, extension?: Readonly<Record<string, unknown>>): SseEvents {
    const result = this.#result;
    const stop = result === undefined ? { stop_reason: 'end_turn', stop_sequence: null } : anthropicStop(result, this.#maxTokens);
    const usage = anthropicUsage(result?.usage ?? { promptTokens: this.#inputTokens, completionTokens: 0 });
    return new SseEvents([
      { event: 'message_delta', data: { type: 'message_delta', delta: stop, usage, ...extension } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }

  error(error: ApiError): SseEvents {
    return new SseEvents([{ event: 'error', data: this.#errorBody(error) }]);
  }

  #openBlock(events: Event[], kind: 'text' | number, block: Record<string, unknown>): void {
    this.#closeBlock(events);
    const index = this.#blocks++;
    this.#open = { index, kind };
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: block } });
  }

  #closeBlock(events: Event[]): void {
    if (this.#open === undefined) return;
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: this.#open.index } });
    this.#open = undefined;
  }

  #delta(delta: Record<string, unknown>): Event {
    return { event: 'content_block_delta', data: { type: 'content_block_delta', index: this.#open!.index, delta } };
  }
}
