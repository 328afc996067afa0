import type { ChatMessage } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';

/** Responses one WebSocket connection remembers for `previous_response_id`; older ones are forgotten first. */
export const MAX_REMEMBERED_RESPONSES = 16;

/**
 * The most text (UTF-16 code units, counted over every remembered conversation as if none shared
 * turns, so the real figure is at most this) one connection keeps. A conversation alone larger
 * than this is not remembered: continuing it fails with `previous_response_not_found`, and the
 * client sends the whole conversation (or compacts it) instead.
 */
export const MAX_REMEMBERED_CHARS = 32 * 1024 * 1024;

interface Remembered {
  turns: readonly ChatMessage[];
  chars: number;
}

function charsOf(turns: readonly ChatMessage[]): number {
  let n = 0;
  for (const t of turns) {
    n += t.content.length + 16;
    for (const c of t.toolCalls ?? []) n += c.id.length + c.name.length + c.arguments.length;
  }
  return n;
}

export function previousResponseNotFound(id: string): ApiError {
  return ApiError.invalidRequest(
    `Previous response with id ${quoteInput(id)} not found. A response with store: false is remembered only by the WebSocket connection that created it, ` +
      `for its last ${MAX_REMEMBERED_RESPONSES} responses, and forgotten when a continuation of it failed; a stored one is found in the responses store until deleted or evicted. ` +
      'Start a new response with the whole conversation in input.',
    'previous_response_id',
    'previous_response_not_found',
  );
}

/**
 * A WebSocket connection's memory of its own responses (Open Responses' connection-local
 * state for `store: false`): each response id → the conversation it ended (its input turns,
 * after the turns of the response it continued, and its reply), without instructions, which
 * apply to one response only. Bounded in count and size (the caps above); nothing outlives the
 * connection. Turns are shared between a response and its continuations, never copied.
 */
export class ResponsesMemory {
  readonly #responses = new Map<string, Remembered>();
  #chars = 0;

  /** The conversation response `id` ended; 400 `previous_response_not_found` if it is not remembered. */
  recall(id: string): readonly ChatMessage[] {
    const found = this.find(id);
    if (found === undefined) throw previousResponseNotFound(id);
    return found;
  }

  /** The conversation response `id` ended, or undefined when it is not remembered. */
  find(id: string): readonly ChatMessage[] | undefined {
    return this.#responses.get(id)?.turns;
  }

  remember(id: string, turns: readonly ChatMessage[]): void {
    const chars = charsOf(turns);
    if (chars > MAX_REMEMBERED_CHARS) return;
    this.forget(id);
    this.#responses.set(id, { turns, chars });
    this.#chars += chars;
    // A Map iterates in insertion order: the first key is the oldest response.
    for (const [oldest, entry] of this.#responses) {
      if (this.#responses.size <= MAX_REMEMBERED_RESPONSES && this.#chars <= MAX_REMEMBERED_CHARS) break;
      this.#responses.delete(oldest);
      this.#chars -= entry.chars;
    }
  }

  forget(id: string): void {
    const found = this.#responses.get(id);
    if (found === undefined) return;
    this.#responses.delete(id);
    this.#chars -= found.chars;
  }

  get size(): number {
    return this.#responses.size;
  }
}
