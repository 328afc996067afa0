import type { GenerationPart } from '../inference/language-model.ts';
import type { ApiError } from '../shared/api-error.ts';
import type { OpenAIFinishReason } from './openai-finish-reason.ts';
import type { OpenAIUsage } from './openai-usage.ts';

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
  /** `extension`: fields a face adds to the usage chunk (the hosted tier's `svc_route`, `svc_outcome`). */
  usage(usage: OpenAIUsage, extension?: Readonly<Record<string, unknown>>): unknown;
  /** The events for an error once the stream is open; default: `data: {error}`, then `[DONE]`. */
  error?(error: ApiError): unknown;
  /** Whether the stream ends with `data: [DONE]` (chat and completions do; the default). */
  doneSentinel?: boolean;
}
