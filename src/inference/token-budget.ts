/**
 * What a request may spend of a model's context, in tokens: prompts far beyond the context are
 * refused before they are tokenized whole (by bytes, then by counting in slices that leave the
 * event loop free), and the reply gets what is left, within what the client and metering allow.
 */
import { ApiError } from '../shared/api-error.ts';
import type { ChatMessage, ChatOptions } from './language-model.ts';

/**
 * An upper bound on how many bytes of input text one token of this vocabulary covers, so that
 * `bytes / maxBytesPerToken` is a lower bound on a text's token count, known without tokenizing.
 * A piece's own UTF-8 length bounds what it covers for SentencePiece (`▁` is 3 bytes for a
 * 1-byte space, `<0x41>` 6 for 1) and byte-level BPE (every byte is written as a 1–2 byte
 * character); other tokenizers (WordPiece lowercases and strips accents, so a 1-byte `e` can
 * stand for a 3-byte character) get a factor of 4.
 */
export function maxBytesPerToken(pieces: readonly string[], tokenizerModel: string | undefined): number {
  // Without the vocabulary in the metadata nothing is known: no bound, count tokens instead.
  if (pieces.length === 0) return Number.POSITIVE_INFINITY;
  let longest = 4;
  for (const piece of pieces) longest = Math.max(longest, Buffer.byteLength(piece, 'utf8'));
  return tokenizerModel === 'llama' || tokenizerModel === 'gpt2' ? longest : 4 * longest;
}

/** Text above this many bytes is counted in slices, yielding to the event loop between them. */
const SLICE_BYTES = 16 * 1024;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts tokens of texts without holding the event loop: each text is tokenized in slices of
 * about SLICE_BYTES (cut before whitespace, where tokenizers split words anyway), with other
 * requests served between slices, and counting stops as soon as `limit` is passed. Slice
 * boundaries can shift the count by a token or so each, so the result is an estimate: callers
 * use it to refuse texts far beyond the context, and count exactly what fits.
 */
export async function estimateTokens(texts: readonly string[], tokenize: (text: string) => number, limit: number, signal?: AbortSignal): Promise<number> {
  let count = 0;
  for (const text of texts) {
    for (let at = 0; at < text.length && count <= limit;) {
      let end = Math.min(text.length, at + SLICE_BYTES);
      if (end < text.length) {
        // Look back for a space within the slice's second half only, so a text without
        // spaces costs no more than one with them.
        let space = end;
        while (space > at + SLICE_BYTES / 2 && text.charCodeAt(space) !== 0x20) space--;
        if (space > at + SLICE_BYTES / 2) end = space;
        // Never split a surrogate pair.
        const code = text.charCodeAt(end - 1);
        if (code >= 0xd800 && code <= 0xdbff) end--;
      }
      count += tokenize(text.slice(at, end));
      at = end;
      if (at < text.length) {
        await yieldToEventLoop();
        // A client that went away while its prompt was being counted: stop counting for it.
        signal?.throwIfAborted();
      }
    }
    if (count > limit) break;
  }
  return count;
}

export function contextLengthExceeded(param: string, message: string): ApiError {
  return new ApiError({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param, message });
}

/** How a model's tokens are counted: the byte bound of its vocabulary, and its tokenizer. */
export interface TokenCounter {
  /** See maxBytesPerToken. */
  maxBytesPerToken: number;
  count(text: string): number;
}

/**
 * Refuses text that cannot fit `limit` tokens, cheaply and without holding the event loop:
 * first by its size in bytes (a lower bound on its tokens, no tokenizing at all), then by
 * counting tokens in slices. What passes is at most about `limit` tokens, so tokenizing it
 * whole afterwards is bounded work whatever a client sends.
 */
export async function refuseOversizedText(
  counter: TokenCounter, texts: readonly string[], limit: number, param: string, what: string, signal: AbortSignal | undefined,
): Promise<void> {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text, 'utf8');
  const atLeast = Math.ceil(bytes / counter.maxBytesPerToken);
  if (atLeast > limit) {
    throw contextLengthExceeded(param, `${what} is ${bytes} bytes, at least ${atLeast} tokens; this model's context holds ${limit} per request.`);
  }
  if (bytes <= SLICE_BYTES) return;
  // Slice counts can run a token or two per slice above the exact count; leave that much room.
  const slack = Math.ceil(bytes / SLICE_BYTES) * 2;
  const estimate = await estimateTokens(texts, (text) => counter.count(text), limit + slack, signal);
  if (estimate > limit + slack) {
    throw contextLengthExceeded(param, `${what} is ${bytes} bytes, more than ${limit + slack} tokens; this model's context holds ${limit} per request.`);
  }
}

/** A `max_tokens` the context could never hold, prompt or not, is refused before any work. */
export function refuseMaxTokensBeyondContext(maxTokens: number | undefined, contextSize: number): void {
  if (maxTokens !== undefined && maxTokens > contextSize) {
    throw new ApiError({
      status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'max_tokens',
      message: `max_tokens is ${maxTokens}; this model's context holds ${contextSize} tokens per request, prompt included.`,
    });
  }
}

export interface ReplyBudgetRequest {
  /** The prompt as the engine will evaluate it, template included. */
  promptTokens: number;
  contextSize: number;
  /** The client's `max_tokens`. */
  maxTokens: number | undefined;
  /** A lower ceiling from the caller (hosted metering's, via onPromptTokens). */
  cap: number | undefined;
  /** What a request without `max_tokens` gets. */
  defaultMaxTokens: number;
  /** The request field that holds the prompt, for the 400. */
  param: string;
}

/**
 * Tokens left for the reply: what the client asked for (else the default), within the caller's
 * cap and what the context has left. A prompt that does not fit is the client's error (400), as
 * with OpenAI.
 */
export function replyTokenBudget(request: ReplyBudgetRequest): number {
  const { promptTokens, contextSize, maxTokens, cap, defaultMaxTokens, param } = request;
  const requested = cap === undefined ? maxTokens : Math.min(cap, maxTokens ?? defaultMaxTokens);
  const room = contextSize - promptTokens;
  if (room < 1) {
    throw contextLengthExceeded(param, `The prompt is ${promptTokens} tokens; this model's context holds ${contextSize} per request.`);
  }
  return Math.min(requested ?? defaultMaxTokens, room);
}

/** The client-supplied text a chat prompt is made of, for the size check before tokenizing. */
export function promptTexts(messages: readonly ChatMessage[], options: ChatOptions): string[] {
  const texts: string[] = [];
  for (const m of messages) {
    texts.push(m.content);
    for (const call of m.toolCalls ?? []) texts.push(call.name, call.arguments);
  }
  for (const tool of options.tools ?? []) texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.parameters ?? {}));
  return texts;
}
