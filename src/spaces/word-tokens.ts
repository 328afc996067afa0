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
  if (!NON_ASCII.test(text)) return asciiWords(text.toLowerCase());
  const words = foldText(text).split(SEPARATORS);
  // split leaves an empty string at either end when the text starts or ends with a separator.
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}

/**
 * The words of lower-case ASCII text: in ASCII, letters and digits are a–z and 0–9 once lowered,
 * so a scan of char codes splits exactly as SEPARATORS does, in 60% of the time (a space's ingest
 * folds each chunk's words two or three times: the embedder, the word statistics, the BM25 index).
 */
function asciiWords(lower: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      words.push(lower.slice(start, i));
      start = -1;
    }
  }
  if (start >= 0) words.push(lower.slice(start));
  return words;
}

/** Beyond this many runs a word is a code or a hash ("3f9a2b7c"), whose runs mean nothing alone. */
const MAX_PIECES = 3;

/**
 * A folded word that mixes letters and digits as its letter and digit runs ("kz35" → "kz", "35";
 * "x86" → "x", "86"), so it matches the same code written "KZ-35" or "KZ 35"; any other word (or
 * one of more than MAX_PIECES runs) as itself. Digits are ASCII here: what product codes use.
 */
export function alphanumericPieces(word: string): string[] {
  let cuts = 0;
  let wasDigit = isAsciiDigit(word.charCodeAt(0));
  for (let i = 1; i < word.length; i++) {
    const digit = isAsciiDigit(word.charCodeAt(i));
    if (digit !== wasDigit) cuts++;
    wasDigit = digit;
  }
  if (cuts === 0 || cuts >= MAX_PIECES) return [word];
  const pieces: string[] = [];
  let start = 0;
  wasDigit = isAsciiDigit(word.charCodeAt(0));
  for (let i = 1; i < word.length; i++) {
    const digit = isAsciiDigit(word.charCodeAt(i));
    if (digit !== wasDigit) {
      pieces.push(word.slice(start, i));
      start = i;
    }
    wasDigit = digit;
  }
  pieces.push(word.slice(start));
  return pieces;
}

function isAsciiDigit(code: number): boolean {
  return code >= 48 && code <= 57;
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
