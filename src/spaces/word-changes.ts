import { foldedWords } from './word-tokens.ts';

/** Longer "words" (hashes, base64) are not worth a row of statistics; their idf is the unseen word's. */
export const MAX_COUNTED_WORD = 64;

interface WordChange {
  change: number;
  /** The last chunk (add call) that counted this word: a chunk counts each of its words once. */
  chunk: number;
}

/**
 * The net changes of a space's document frequencies in one write: each chunk added (sign 1) or
 * removed (sign -1) counts each of its words once. One map lookup per word, the chunk's number
 * telling a repeat within the chunk: a Set of each chunk's words and a read and a write of the
 * total per distinct word took twice as long (6 µs a chunk more, 20,000 generated chunks).
 */
export class WordChanges {
  readonly #changes = new Map<string, WordChange>();
  #chunk = 0;

  add(text: string, sign: 1 | -1): void {
    const chunk = ++this.#chunk;
    const changes = this.#changes;
    for (const word of foldedWords(text)) {
      if (word.length > MAX_COUNTED_WORD) continue;
      const entry = changes.get(word);
      if (entry === undefined) {
        changes.set(word, { change: sign, chunk });
      } else if (entry.chunk !== chunk) {
        entry.chunk = chunk;
        entry.change += sign;
      }
    }
  }

  /** Each word whose frequency changed, with the change (never 0). */
  *entries(): Generator<[word: string, change: number]> {
    for (const [word, { change }] of this.#changes) if (change !== 0) yield [word, change];
  }
}
