import { wordSpans, type WordSpan } from './word-tokens.ts';

export const SNIPPET_CHARS = 200;
const OPEN = '«';
const CLOSE = '»';

export interface SnippetOptions {
  /** About how many characters of the text to show. */
  width?: number;
  /** Maps a folded word to what a query term must equal to match it (a stemmer, so "installing" matches "install"). */
  matchKey?: (word: string) => string;
}

/** A snippet and where its marked words are: [start, end) in UTF-16 code units of `snippet`, the API's « at start - 1 and » at end. */
export interface MarkedSnippet {
  snippet: string;
  marks: [number, number][];
}

/**
 * A short plain-text passage of `text` around its densest cluster of query terms, each matched
 * word wrapped in «…»: the window of at most `width` characters holding the most distinct
 * terms (then the most matches), widened to whole words, whitespace collapsed, "…" where cut.
 * Without any match (a dense-only hit), the text's beginning.
 */
export function searchSnippet(text: string, terms: readonly string[], options: SnippetOptions = {}): string {
  return markedSnippet(text, terms, options).snippet;
}

/**
 * searchSnippet with the offsets of its marks: a document's own « and » are text, so only
 * these offsets tell a reader which «…» the API wrote.
 */
export function markedSnippet(text: string, terms: readonly string[], options: SnippetOptions = {}): MarkedSnippet {
  const width = options.width ?? SNIPPET_CHARS;
  const key = options.matchKey ?? ((word: string) => word);
  const termIds = new Map<string, number>();
  for (const term of terms) if (!termIds.has(key(term))) termIds.set(key(term), termIds.size);
  const matches: { span: WordSpan; term: number }[] = [];
  if (termIds.size > 0) {
    let lastStart = -1;
    for (const span of wordSpans(text)) {
      // A word that folds into pieces yields several spans over the same characters: mark it once.
      if (span.start === lastStart) continue;
      const term = termIds.get(key(span.folded));
      if (term === undefined) continue;
      matches.push({ span, term });
      lastStart = span.start;
    }
  }
  if (matches.length === 0) return cut(text, 0, Math.min(text.length, width), []);

  // Two pointers over the matches: the window [left, right] spans at most `width` characters.
  const inWindow = new Map<number, number>();
  let best = { left: 0, right: 0, distinct: 0, count: 0 };
  let left = 0;
  for (let right = 0; right < matches.length; right++) {
    const added = matches[right]!.term;
    inWindow.set(added, (inWindow.get(added) ?? 0) + 1);
    while (matches[right]!.span.end - matches[left]!.span.start > width && left < right) {
      const removed = matches[left]!.term;
      const remaining = inWindow.get(removed)! - 1;
      if (remaining === 0) inWindow.delete(removed);
      else inWindow.set(removed, remaining);
      left++;
    }
    const count = right - left + 1;
    if (inWindow.size > best.distinct || (inWindow.size === best.distinct && count > best.count)) {
      best = { left, right, distinct: inWindow.size, count };
    }
  }
  const first = matches[best.left]!.span;
  const last = matches[best.right]!.span;
  // Centre the cluster in the window, then keep the window inside the text.
  const slack = Math.max(0, width - (last.end - first.start));
  let start = Math.max(0, first.start - Math.floor(slack / 2));
  const end = Math.min(text.length, Math.max(last.end, start + width));
  start = Math.max(0, Math.min(start, end - width, first.start));
  return cut(text, start, end, matches.slice(best.left, best.right + 1).map((m) => m.span));
}

/** text[start, end) widened or narrowed to whole words, marks around `marked`, whitespace collapsed, "…" where cut. */
function cut(text: string, start: number, end: number, marked: WordSpan[]): MarkedSnippet {
  let from = start;
  let to = end;
  const firstMark = marked[0]?.start ?? to;
  const lastMark = marked[marked.length - 1]?.end ?? from;
  // Do not start or end inside a word: move inward to a space (never past a marked word).
  if (from > 0 && !/\s/.test(text[from - 1]!)) {
    const space = text.slice(from, firstMark).search(/\s/);
    if (space >= 0) from += space + 1;
  }
  if (to < text.length && !/\s/.test(text[to]!)) {
    const tail = text.slice(lastMark, to);
    const space = Math.max(tail.lastIndexOf(' '), tail.lastIndexOf('\n'), tail.lastIndexOf('\t'));
    if (space >= 0) to = lastMark + space;
  }
  // The text between marks, whitespace collapsed piece by piece: a marked word holds no
  // whitespace, so no run of it crosses a mark and each mark's offset is known as it is written.
  const between = [...marked.map((span, i) => text.slice(i === 0 ? from : marked[i - 1]!.end, span.start)), text.slice(marked[marked.length - 1]?.end ?? from, to)]
    .map((piece) => piece.replace(/\s+/g, ' '));
  between[0] = between[0]!.trimStart();
  between[between.length - 1] = between[between.length - 1]!.trimEnd();
  let out = from > 0 ? '…' : '';
  const marks: [number, number][] = [];
  marked.forEach((span, i) => {
    out += between[i]! + OPEN;
    marks.push([out.length, out.length + span.end - span.start]);
    out += text.slice(span.start, span.end) + CLOSE;
  });
  out += between[between.length - 1]!;
  return { snippet: out + (to < text.length ? '…' : ''), marks };
}
