import type { GenerateResult, GenerationPart, ToolCall } from '../inference/language-model.ts';
import type { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import type { OpenAIFinishReason } from './openai-finish-reason.ts';
import type { OpenAIUsage } from './openai-usage.ts';
import { SseEvents, type StreamShape } from './stream-shape.ts';

/**
 * The request fields a Response object echoes back: OpenAI returns the settings it used, and the
 * Open Responses schema (ResponseResource) requires each one, so every field has a value here
 * (toResponseSettings in responses-request.ts fills in what the request left out).
 */
export interface ResponseSettings {
  model: string;
  /** Whether the response is kept in the responses store (`store`, OpenAI's default true). */
  store: boolean;
  /** The response this one continues. */
  previousResponseId: string | null;
  instructions: string | null;
  maxOutputTokens: number | null;
  temperature: number;
  topP: number;
  presencePenalty: number;
  frequencyPenalty: number;
  topLogprobs: number;
  parallelToolCalls: boolean;
  toolChoice: unknown;
  tools: readonly unknown[];
  text: unknown;
  truncation: string;
  serviceTier: string;
  safetyIdentifier: string | null;
  promptCacheKey: string | null;
  metadata: Record<string, string>;
  user: string | null;
}

type Status = 'in_progress' | 'completed' | 'incomplete' | 'failed';

interface MessageItem {
  id: string;
  type: 'message';
  status: Status;
  role: 'assistant';
  content: { type: 'output_text'; text: string; annotations: never[]; logprobs: never[] }[];
}

interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: Status;
  call_id: string;
  name: string;
  arguments: string;
}

type OutputItem = MessageItem | FunctionCallItem;

/** OpenAI usage in the Responses API's names (a Response object's and a compaction's `usage`). */
export function responsesUsage(usage: OpenAIUsage): object {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

function messageItem(text: string, status: Status): MessageItem {
  return { id: newId('msg_'), type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

function functionCallItem(call: ToolCall, status: Status): FunctionCallItem {
  return { id: newId('fc_'), type: 'function_call', status, call_id: call.id, name: call.name, arguments: call.arguments };
}

/**
 * One OpenAI Response object, whole or streamed. Output items: the reply's text as a
 * `message` (also when empty, unless the model only called tools), then one `function_call`
 * per tool call. `max_output_tokens` reached → status `incomplete` with
 * `incomplete_details.reason: "max_output_tokens"`, as OpenAI answers.
 *
 * Streamed, it emits OpenAI's event sequence, each event with its `sequence_number`:
 * `response.created`, `response.in_progress`, then per item `response.output_item.added`,
 * (`response.content_part.added`, `response.output_text.delta`…, `response.output_text.done`,
 * `response.content_part.done`) or (`response.function_call_arguments.delta`…,
 * `response.function_call_arguments.done`), `response.output_item.done`, and finally
 * `response.completed` (or `response.incomplete`) with the whole response and usage. An error
 * after the stream opened is an `error` event followed by `response.failed`.
 */
export class ResponseBuilder {
  readonly id = newId('resp_');
  readonly createdAt = Math.floor(Date.now() / 1000);
  readonly #settings: ResponseSettings;
  readonly #output: OutputItem[] = [];
  /** The item being streamed (the last of #output), if still open. */
  #open: OutputItem | undefined;
  #sequence = 0;
  #status: Status = 'in_progress';
  #final: Record<string, unknown> | undefined;

  readonly #onFinal: ((response: Record<string, unknown>) => void) | undefined;

  /** `onFinal`: called with the whole response once it ended, before it is answered (or its last event sent): where a store keeps it. */
  constructor(settings: ResponseSettings, onFinal?: (response: Record<string, unknown>) => void) {
    this.#settings = settings;
    this.#onFinal = onFinal;
  }

  #snapshot(usage?: OpenAIUsage, error?: ApiError): Record<string, unknown> {
    const s = this.#settings;
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status: this.#status,
      completed_at: this.#status === 'completed' ? Math.floor(Date.now() / 1000) : null,
      error: error === undefined ? null : { code: error.code, message: error.message },
      incomplete_details: this.#status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
      instructions: s.instructions,
      max_output_tokens: s.maxOutputTokens,
      max_tool_calls: null,
      model: s.model,
      output: this.#output,
      parallel_tool_calls: s.parallelToolCalls,
      previous_response_id: s.previousResponseId,
      reasoning: { effort: null, summary: null },
      store: s.store,
      background: false,
      service_tier: s.serviceTier,
      temperature: s.temperature,
      top_p: s.topP,
      presence_penalty: s.presencePenalty,
      frequency_penalty: s.frequencyPenalty,
      top_logprobs: s.topLogprobs,
      text: s.text,
      tool_choice: s.toolChoice,
      tools: s.tools,
      truncation: s.truncation,
      usage: usage === undefined ? null : responsesUsage(usage),
      user: s.user,
      safety_identifier: s.safetyIdentifier,
      prompt_cache_key: s.promptCacheKey,
      metadata: s.metadata,
    };
  }

  /** The whole response for a generation that ran to its end. */
  complete(result: GenerateResult, usage: OpenAIUsage): object {
    const status: Status = result.finishReason === 'length' ? 'incomplete' : 'completed';
    this.#status = status;
    if (result.text !== '' || result.toolCalls.length === 0) this.#output.push(messageItem(result.text, status));
    for (const call of result.toolCalls) this.#output.push(functionCallItem(call, status));
    this.#final = this.#snapshot(usage);
    this.#onFinal?.(this.#final);
    return this.#final;
  }

  /** The whole response once it ended (completed or incomplete, whole or streamed): what a store keeps. */
  get final(): Record<string, unknown> | undefined {
    return this.#final;
  }

  #event(type: string, fields: object): { event: string; data: unknown } {
    return { event: type, data: { type, sequence_number: this.#sequence++, ...fields } };
  }

  #add(item: OutputItem, events: { event: string; data: unknown }[]): void {
    this.#output.push(item);
    this.#open = item;
    events.push(this.#event('response.output_item.added', { output_index: this.#output.length - 1, item: structuredClone(item) }));
    if (item.type === 'message') {
      events.push(this.#event('response.content_part.added', {
        item_id: item.id, output_index: this.#output.length - 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      }));
    }
  }

  #close(status: Status, events: { event: string; data: unknown }[]): void {
    const item = this.#open;
    if (item === undefined) return;
    this.#open = undefined;
    item.status = status;
    const output_index = this.#output.length - 1;
    if (item.type === 'message') {
      const part = item.content[0]!;
      events.push(this.#event('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text: part.text, logprobs: [] }));
      events.push(this.#event('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: structuredClone(part) }));
    } else {
      events.push(this.#event('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: item.arguments }));
    }
    events.push(this.#event('response.output_item.done', { output_index, item: structuredClone(item) }));
  }

  #part(part: GenerationPart): SseEvents {
    const events: { event: string; data: unknown }[] = [];
    switch (part.type) {
      case 'text-delta': {
        if (this.#open?.type !== 'message') {
          this.#close('completed', events);
          this.#add(messageItem('', 'in_progress'), events);
        }
        const item = this.#open as MessageItem;
        item.content[0]!.text += part.text;
        events.push(this.#event('response.output_text.delta', {
          item_id: item.id, output_index: this.#output.length - 1, content_index: 0, delta: part.text, logprobs: [],
        }));
        break;
      }
      case 'tool-call-start':
        this.#close('completed', events);
        this.#add(functionCallItem({ id: part.id, name: part.name, arguments: '' }, 'in_progress'), events);
        break;
      case 'tool-call-delta': {
        const item = this.#open;
        if (item?.type !== 'function_call') break;
        item.arguments += part.argumentsDelta;
        events.push(this.#event('response.function_call_arguments.delta', { item_id: item.id, output_index: this.#output.length - 1, delta: part.argumentsDelta }));
        break;
      }
    }
    return new SseEvents(events);
  }

  /** The stream shape for runGeneration: named events, no `[DONE]`, usage always sent (it ends the stream). */
  streamShape(): StreamShape {
    return {
      doneSentinel: false,
      start: () => new SseEvents([
        this.#event('response.created', { response: this.#snapshot() }),
        this.#event('response.in_progress', { response: this.#snapshot() }),
      ]),
      part: (_index, part) => this.#part(part),
      finish: (_index, reason: OpenAIFinishReason) => {
        const events: { event: string; data: unknown }[] = [];
        const status: Status = reason === 'length' ? 'incomplete' : 'completed';
        // A reply with no text and no call still has its (empty) message, as the whole response does.
        if (this.#output.length === 0) this.#add(messageItem('', 'in_progress'), events);
        this.#close(status, events);
        this.#status = status;
        return new SseEvents(events);
      },
      usage: (usage) => {
        this.#final = this.#snapshot(usage);
        this.#onFinal?.(this.#final);
        return new SseEvents([this.#event(this.#status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: this.#final })]);
      },
      error: (error) => {
        this.#status = 'failed';
        return new SseEvents([
          this.#event('error', { code: error.code, message: error.message, param: error.param }),
          this.#event('response.failed', { response: this.#snapshot(undefined, error) }),
        ]);
      },
    };
  }
}
