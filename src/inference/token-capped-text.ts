import type { Token } from 'node-llama-cpp';

/**
 * Keeps a plain completion's text to its first `maxTokens` tokens. node-llama-cpp's
 * LlamaCompletion (3.22) holds a token whose own text ends inside a multi-byte UTF-8 character
 * until the next one, and skips its maxTokens check meanwhile: when the last token allowed is
 * such a byte, it samples one more and hands over the text of both. A reply cut by max_tokens
 * then ended with text from a token past the limit (`…€m` for max_tokens ending on the last byte
 * of `€`). Fed LlamaCompletion's `onToken` and `onTextChunk` (it calls them in that order, with
 * the same tokens), this passes each chunk on, less the text of any token past the limit and
 * any character the allowed tokens end inside of.
 */
export class TokenCappedText {
  readonly #maxTokens: number;
  readonly #detokenize: (tokens: readonly Token[], lastTokens: readonly Token[]) => string;
  readonly #tokens: Token[] = [];
  /** How many of #tokens came with the chunk about to be passed to text(). */
  #chunkTokens = 0;
  #overran = false;
  #text = '';

  constructor(maxTokens: number, detokenize: (tokens: readonly Token[], lastTokens: readonly Token[]) => string) {
    this.#maxTokens = maxTokens;
    this.#detokenize = detokenize;
  }

  /** Whether tokens past the limit were generated (their text was left out). */
  get overran(): boolean {
    return this.#overran;
  }

  /** Every chunk text() returned, joined: the reply. */
  get text(): string {
    return this.#text;
  }

  /** `onToken` */
  tokens(tokens: readonly Token[]): void {
    this.#tokens.push(...tokens);
    this.#chunkTokens += tokens.length;
  }

  /** `onTextChunk`: what of `chunk` is within the limit. */
  chunk(chunk: string): string {
    const count = this.#chunkTokens;
    this.#chunkTokens = 0;
    const before = this.#tokens.length - count;
    const room = this.#maxTokens - before;
    if (count <= room) {
      this.#text += chunk;
      return chunk;
    }
    this.#overran = true;
    if (room <= 0) return '';
    // The allowed tokens' text, cut where it stops agreeing with the chunk's: a character the
    // allowed tokens end inside of decodes to U+FFFD there.
    const allowed = this.#detokenize(this.#tokens.slice(before, before + room), this.#tokens.slice(0, before));
    let end = 0;
    while (end < allowed.length && allowed[end] === chunk[end]) end++;
    if (end > 0 && isHighSurrogate(chunk.charCodeAt(end - 1))) end--;
    this.#text += chunk.slice(0, end);
    return chunk.slice(0, end);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
