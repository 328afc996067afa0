import { foldedWords } from './word-tokens.ts';

/** More distinct terms than this add cost (FTS5 scores every row matching any of them) and little ranking. */
export const MAX_QUERY_TERMS = 32;

/**
 * The distinct folded words of a query, in order, at most MAX_QUERY_TERMS: the terms the
 * BM25 expression and the snippet use.
 */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const word of foldedWords(query)) {
    if (seen.has(word)) continue;
    seen.add(word);
    terms.push(word);
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  return terms;
}

/**
 * An FTS5 MATCH expression for `terms` that never parses user text as FTS5 syntax: every term
 * is a double-quoted string (FTS5 takes a string's content as plain tokens), the terms joined
 * by OR so a passage matching some of them still ranks. Terms hold only letters and digits
 * (word-tokens.ts), but any `"` would be doubled all the same. Null when there is no term.
 */
export function bm25Expression(terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}

/** Terms in more than this share of a space's chunks weigh nothing in FTS5's BM25 (its idf is clamped at 0 there). */
const NO_WEIGHT_SHARE = 0.5;
/** Past this many rows (estimated by Σ document frequency), common terms leave the expression: a fifth of the space, within bounds. */
const ROW_BUDGET_SHARE = 0.2;
const MIN_ROW_BUDGET = 5_000;
const MAX_ROW_BUDGET = 20_000;
/** The rows FTS5 may score for one query in a space of `chunkCount` chunks. */
export function fts5RowBudget(chunkCount: number): number {
  return Math.min(Math.max(ROW_BUDGET_SHARE * chunkCount, MIN_ROW_BUDGET), MAX_ROW_BUDGET);
}

/**
 * The in-memory BM25 index (bm25-index.ts) adds a posting in a few ns where FTS5 scored a row in
 * 1–2 µs, so it affords 10 times FTS5's budget: common words stay in the query unless they would
 * add more than twice the space's chunk count, and never more than 200,000 postings (10 times
 * FTS5's cap). The cap matters from 100,000 chunks on: at a million, common words cost BM25 up to
 * 2,000,000 postings a query, 37.5 ms p99 in process against 10.5 ms capped, for one answer
 * in 464 of the labelled set (hybrid recall@10 0.884 → 0.881; docs/BENCHMARKS.md, "Big spaces").
 */
export function indexRowBudget(chunkCount: number): number {
  return Math.min(Math.max(2 * chunkCount, MIN_ROW_BUDGET), 10 * MAX_ROW_BUDGET);
}

/** Terms in at most this share of the chunks always stay: a rare word is what a query is about. */
const ALWAYS_KEPT_SHARE = 0.02;

/**
 * The terms worth handing FTS5. Its BM25 scores every row that matches any term (about a
 * microsecond or two a row), so a query with common words costs in proportion to the space.
 * Terms in over half the chunks go first: FTS5's idf for them is 0, so no score changes. Then,
 * while the rows matched would still exceed the budget, the commonest term with more than 2%
 * of the chunks goes. On the known-item test (hashed-embedder.ts, 13,048 chunks, a budget of a
 * fifth without the floor) the first step changed nothing and the second cost 0.011 of MRR@10
 * (0.457 → 0.447) for a third of the rows scored.
 * `documentFrequency` is of the unstemmed word, a lower bound of FTS5's stem counts.
 * `rowBudget` is FTS5's unless told: the in-memory BM25 index (bm25-index.ts) affords more.
 */
export function selectiveTerms(
  terms: readonly string[], documentFrequency: (term: string) => number, chunkCount: number,
  rowBudget: (chunkCount: number) => number = fts5RowBudget,
): string[] {
  if (terms.length <= 1) return [...terms];
  const budget = rowBudget(chunkCount);
  // Cheap enough as it is: every term counts (in a small space every word of a query can be in
  // over half the chunks, and dropping them would find nothing).
  if (terms.reduce((sum, term) => sum + documentFrequency(term), 0) <= budget) return [...terms];
  const present = terms.filter((term) => documentFrequency(term) > 0);
  const rarestPresent = present.reduce<string | undefined>((rarest, term) => (rarest === undefined || documentFrequency(term) < documentFrequency(rarest) ? term : rarest), undefined);
  const weighty = terms.filter((term) => documentFrequency(term) <= NO_WEIGHT_SHARE * chunkCount);
  // Nothing but common words (or only words the space may not hold, by their unstemmed count):
  // the rarest word it does hold still finds something.
  if (weighty.every((term) => documentFrequency(term) === 0) && rarestPresent !== undefined) {
    return weighty.length === 0 ? [rarestPresent] : [...weighty, rarestPresent];
  }
  const commonestFirst = [...weighty].sort((a, b) => documentFrequency(b) - documentFrequency(a));
  let rows = commonestFirst.reduce((sum, term) => sum + documentFrequency(term), 0);
  const dropped = new Set<string>();
  for (const term of commonestFirst) {
    if (rows <= budget || dropped.size === commonestFirst.length - 1 || documentFrequency(term) <= ALWAYS_KEPT_SHARE * chunkCount) break;
    dropped.add(term);
    rows -= documentFrequency(term);
  }
  return weighty.filter((term) => !dropped.has(term));
}
