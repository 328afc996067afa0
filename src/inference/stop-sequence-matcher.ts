/**
 * svc's own stop-sequence matching over a generation's text stream, in place of node-llama-cpp's
 * `customStopTriggers`: node-llama-cpp 3.22 holds back text that might begin a stop sequence and
 * never releases it when `max_tokens` ends the generation, so replies lost their last characters.
 *
 * Text is fed as it is decoded (node-llama-cpp hands over whole characters: a character whose
 * UTF-8 bytes span tokens arrives once complete; test/runtime/stop-sequences-multibyte.test.ts
 * checks it with byte tokens on real inference). What comes back is the text that can no longer
 * be part of a match: everything except the longest suffix that is a proper prefix of some stop
 * sequence. The reply is the generated text cut exactly before the first match, or, when the
 * generation ends without one, the whole text (`flush` releases what was held back).
 */
export class StopSequenceMatcher {
  readonly #stops: readonly string[];
  /** The longest stop sequence, in UTF-16 code units: no held suffix is longer. */
  readonly #longest: number;
  #held = '';
  #stopped = false;
  #matched: string | undefined;

  /** `stops`: the request's stop sequences; empty strings match nothing (as with OpenAI). */
  constructor(stops: readonly string[]) {
    this.#stops = stops.filter((s) => s !== '');
    this.#longest = Math.max(0, ...this.#stops.map((s) => s.length));
  }

  /** Whether a stop sequence has matched: the reply is complete, and later text is ignored. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The stop sequence that matched (Anthropic's `stop_sequence` names it); undefined before a match. */
  get matched(): string | undefined {
    return this.#matched;
  }

  /** Feeds newly generated text; returns what may be released now (possibly empty). */
  push(text: string): string {
    if (this.#stopped || text === '') return '';
    const window = this.#held + text;
    const at = this.#firstMatch(window);
    if (at >= 0) {
      this.#stopped = true;
      this.#held = '';
      return window.slice(0, at);
    }
    const keep = this.#partialSuffix(window);
    this.#held = window.slice(window.length - keep);
    return window.slice(0, window.length - keep);
  }

  /** The generation ended without a match (max_tokens, end of generation): what was held back. */
  flush(): string {
    const rest = this.#held;
    this.#held = '';
    return rest;
  }

  /**
   * Where the first match begins: of the stop sequences in `window`, the one that ends first
   * (read character by character, the one that completes first), the longer one on a tie. So
   * the cut does not depend on how the text was split into tokens or chunks. No match can start
   * in text released before: released text never ends with the start of a stop sequence.
   */
  #firstMatch(window: string): number {
    let start = -1;
    let end = Number.POSITIVE_INFINITY;
    for (const stop of this.#stops) {
      const at = window.indexOf(stop);
      if (at < 0) continue;
      const stopEnd = at + stop.length;
      if (stopEnd < end || (stopEnd === end && at < start)) {
        start = at;
        end = stopEnd;
        this.#matched = stop;
      }
    }
    return start;
  }

  /** Length of the longest suffix of `window` that some stop sequence begins with. */
  #partialSuffix(window: string): number {
    for (let length = Math.min(this.#longest - 1, window.length); length > 0; length--) {
      const suffix = window.slice(window.length - length);
      if (this.#stops.some((stop) => stop.startsWith(suffix))) {
        // Never split a surrogate pair between released and held text (a stop that begins with
        // a lone low surrogate could otherwise ask for it): hold the whole character.
        const cut = window.length - length;
        return cut > 0 && isHighSurrogate(window.charCodeAt(cut - 1)) && isLowSurrogate(window.charCodeAt(cut)) ? length + 1 : length;
      }
    }
    return 0;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
