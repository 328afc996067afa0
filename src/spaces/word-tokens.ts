/**
 * The one notion of a "word" in a space: the built-in embedder hashes these words, the space's
 * document frequencies count them, and snippets highlight them. It follows FTS5's unicode61
 * tokenizer with remove_diacritics 2 closely enough that a word here is a token there: runs of
 * letters and digits, compatibility forms and diacritics folded (NFKD, marks dropped), lower case.
 */

const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const WORD_SPANS = /[\p{L}\p{N}\p{M}]+/gu;
// Pure ASCII needs neither normalization nor mark removal, and it is most text: skip both.
const NON_ASCII = /[^\x00-\x7f]/;

/** `text` with compatibility forms and diacritics folded, lower case. */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase();
}

/** The folded words of `text`, in order, repeats kept. */
export function foldedWords(text: string): string[] {
  const words = foldText(text).split(SEPARATORS);
  // split leaves an empty string at either end when the text starts or ends with a separator.
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}

export interface WordSpan {
  /** UTF-16 offsets into the original text. */
  start: number;
  end: number;
  folded: string;
}

/** The words of `text` with where they stand in it (for highlighting the original text). */
export function wordSpans(text: string): WordSpan[] {
  const spans: WordSpan[] = [];
  for (const match of text.matchAll(WORD_SPANS)) {
    const folded = foldText(match[0]);
    // A run of marks alone (a stray combining accent) folds to nothing: not a word.
    if (folded === '') continue;
    // Folding can split a run (a compatibility form that decomposes to a separator): keep each piece at the run's place.
    for (const piece of folded.split(SEPARATORS)) {
      if (piece !== '') spans.push({ start: match.index, end: match.index + match[0].length, folded: piece });
    }
  }
  return spans;
}
