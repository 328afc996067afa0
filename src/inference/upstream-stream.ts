import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { newId } from '../shared/new-id.ts';
import type { FinishReason, GenerateResult, GenerationPart, TokenUsage, ToolCall } from './language-model.ts';
import { malformedUpstream, upstreamStreamError, type UpstreamErrorContext } from './upstream-errors.ts';
import { upstreamChunkSchema, upstreamErrorBodySchema, type UpstreamChunk, type UpstreamToolCallDelta } from './upstream-schemas.ts';

/**
 * Turns an upstream's chat or completion stream into our generation parts, never piping it
 * blind: each SSE event is parsed and checked against a lenient schema, then normalized.
 *
 * - `choices: null` or missing is no choices; a choice without `index` is choice 0; choices
 *   other than 0 are ignored (svc always asks for one).
 * - Usage may come first, last, with the finish chunk or in every chunk (vLLM's continuous
 *   usage): the last one seen wins.
 * - Tool calls: OpenAI streams a start (id, name) and argument deltas by `index`; Ollama
 *   sends a whole call in one delta, sometimes without `index`; some servers omit `id`
 *   (svc makes one). Our parts number calls 0, 1, … in the order they start.
 * - A stream that ends after a finish reason without `[DONE]` is complete; one that ends
 *   without either was cut off (502); an error event mid-stream becomes our error.
 */
export type StreamKind = 'chat' | 'completion';

interface CallState {
  /** Our index, in start order. */
  index: number;
  id: string;
  name: string;
  arguments: string;
  /** Whether the start part went out (it waits for the name). */
  started: boolean;
  /** Argument text received before the name, sent right after the start. */
  pending: string;
}

const FINISH_REASONS = new Map<string, FinishReason>([
  ['stop', 'stop'],
  ['eos', 'stop'],
  ['eos_token', 'stop'],
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['length', 'length'],
  ['max_tokens', 'length'],
  ['model_length', 'length'],
  ['tool_calls', 'tool_calls'],
  ['tool_use', 'tool_calls'],
  ['function_call', 'tool_calls'],
  ['content_filter', 'content_filter'],
]);

/** An upstream's finish reason in OpenAI's vocabulary; anything unknown is `stop`. */
export function normalizeFinishReason(reason: string): FinishReason {
  return FINISH_REASONS.get(reason) ?? 'stop';
}

export class UpstreamStreamNormalizer {
  readonly #kind: StreamKind;
  readonly #ctx: UpstreamErrorContext;
  readonly #onPart: ((part: GenerationPart) => void) | undefined;
  #text = '';
  readonly #calls: CallState[] = [];
  /** Upstream tool-call index → our call. */
  readonly #byUpstreamIndex = new Map<number, CallState>();
  #finish: FinishReason | undefined;
  #usage: TokenUsage | undefined;
  #done = false;

  constructor(kind: StreamKind, ctx: UpstreamErrorContext, onPart?: (part: GenerationPart) => void) {
    this.#kind = kind;
    this.#ctx = ctx;
    this.#onPart = onPart;
  }

  /** Whether `[DONE]` arrived. */
  get done(): boolean {
    return this.#done;
  }

  /** Whether the upstream said how the generation finished. */
  get finished(): boolean {
    return this.#finish !== undefined;
  }

  /** One SSE event. Throws our ApiError for an error event or a malformed chunk. */
  event(event: EventSourceMessage): void {
    if (this.#done) return;
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.#done = true;
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw malformedUpstream(this.#ctx, `a stream event is not JSON (${JSON.stringify(data.slice(0, 40))}…)`);
    }
    if (event.event === 'error') throw upstreamStreamError(this.#ctx, upstreamErrorBodySchema.catch({}).parse(json));
    const parsed = upstreamChunkSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw malformedUpstream(this.#ctx, `a stream chunk does not match the protocol at '${issue?.path.join('.') ?? ''}': ${issue?.message ?? 'invalid'}`);
    }
    this.chunk(parsed.data);
  }

  /** One checked chunk. */
  chunk(chunk: UpstreamChunk): void {
    if (chunk.error != null || chunk.object === 'error') throw upstreamStreamError(this.#ctx, chunk);
    if (chunk.usage != null) {
      this.#usage = { promptTokens: chunk.usage.prompt_tokens ?? 0, completionTokens: chunk.usage.completion_tokens ?? 0 };
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      if (this.#kind === 'completion') {
        this.#addText(choice.text);
      } else if (choice.delta != null) {
        const delta = choice.delta;
        this.#addText(delta.content);
        // A refusal is what the model said instead of an answer; it reaches the client as text.
        this.#addText(delta.refusal);
        for (const call of delta.tool_calls ?? []) this.#toolCall(call);
        if (delta.function_call != null) this.#toolCall({ index: 0, function: delta.function_call });
      }
      if (choice.finish_reason != null && choice.finish_reason !== '') this.#finish = normalizeFinishReason(choice.finish_reason);
    }
  }

  #addText(text: string | null | undefined): void {
    if (text == null || text === '') return;
    this.#text += text;
    this.#onPart?.({ type: 'text-delta', text });
  }

  #toolCall(delta: UpstreamToolCallDelta): void {
    const name = delta.function?.name ?? undefined;
    const rawArgs = delta.function?.arguments;
    const args = rawArgs == null ? '' : typeof rawArgs === 'string' ? rawArgs : JSON.stringify(rawArgs);
    let call = this.#findCall(delta);
    // A new id at an index already in use starts another call (servers that number every call 0).
    if (call !== undefined && delta.id != null && delta.id !== '' && delta.id !== call.id && call.started) call = undefined;
    if (call === undefined) {
      call = { index: this.#calls.length, id: delta.id != null && delta.id !== '' ? delta.id : newId('call_'), name: '', arguments: '', started: false, pending: '' };
      this.#calls.push(call);
    }
    if (delta.index != null) this.#byUpstreamIndex.set(delta.index, call);
    if (name != null && name !== '' && !call.started) call.name += name;
    if (!call.started && call.name !== '') {
      call.started = true;
      this.#onPart?.({ type: 'tool-call-start', index: call.index, id: call.id, name: call.name });
      if (call.pending !== '') this.#onPart?.({ type: 'tool-call-delta', index: call.index, argumentsDelta: call.pending });
      call.pending = '';
    }
    if (args === '') return;
    call.arguments += args;
    if (call.started) this.#onPart?.({ type: 'tool-call-delta', index: call.index, argumentsDelta: args });
    else call.pending += args;
  }

  #findCall(delta: UpstreamToolCallDelta): CallState | undefined {
    if (delta.index != null) return this.#byUpstreamIndex.get(delta.index);
    if (delta.id != null && delta.id !== '') return this.#calls.find((c) => c.id === delta.id);
    // No index and no id: a continuation of the call in progress.
    return this.#calls.at(-1);
  }

  /**
   * The generation once the stream has ended. `cleanEnd`: the body ended normally (not broken
   * off); a stream that stopped before `[DONE]` and before any finish reason was cut off.
   */
  result(cleanEnd: boolean): GenerateResult {
    if (!this.#done && this.#finish === undefined) {
      throw malformedUpstream(this.#ctx, cleanEnd ? 'the stream ended before the generation finished' : 'the stream broke off');
    }
    return this.#result(this.#finish ?? 'stop');
  }

  /** What arrived so far, for a generation the client stopped. */
  partial(): GenerateResult {
    return this.#result('abort');
  }

  #result(reason: FinishReason): GenerateResult {
    const toolCalls: ToolCall[] = this.#calls.filter((c) => c.name !== '').map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    // Ollama (and others) finish a tool-calling turn with `stop`; clients look for `tool_calls`.
    const finishReason = reason === 'stop' && toolCalls.length > 0 ? 'tool_calls' : reason;
    return { text: this.#text, toolCalls, finishReason, usage: this.#usage ?? { promptTokens: 0, completionTokens: 0 } };
  }
}

/** The largest SSE event svc buffers from an upstream (a bound on memory, not a protocol rule). */
export const MAX_UPSTREAM_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Reads an SSE body into the normalizer. Resolves once `[DONE]` arrives (the rest of the body
 * is not waited for) or the body ends; rejects with the normalizer's errors, a parser error,
 * or the body's own error (a broken connection, a timeout).
 */
export async function readUpstreamStream(body: AsyncIterable<Buffer | string>, normalizer: UpstreamStreamNormalizer, ctx: UpstreamErrorContext): Promise<void> {
  let failure: unknown;
  const parser = createParser({
    maxBufferSize: MAX_UPSTREAM_EVENT_CHARS,
    onEvent: (event) => {
      if (failure !== undefined) return;
      try {
        normalizer.event(event);
      } catch (error) {
        failure = error;
      }
    },
    onError: (error) => {
      // Unknown fields are allowed by the SSE spec; only a runaway event is an error here.
      if (error.type === 'max-buffer-size-exceeded') failure ??= malformedUpstream(ctx, `a stream event is larger than ${MAX_UPSTREAM_EVENT_CHARS} characters`);
    },
  });
  const decoder = new TextDecoder();
  for await (const piece of body) {
    parser.feed(typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true }));
    if (failure !== undefined) throw failure;
    if (normalizer.done) return;
  }
  parser.feed(decoder.decode());
  // An event not followed by a blank line is still an event (some servers end that way).
  parser.reset({ consume: true });
  if (failure !== undefined) throw failure;
}
