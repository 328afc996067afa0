/**
 * A search result's score in words. The daemon fuses its lists by reciprocal rank fusion
 * (src/spaces/rank-fusion.ts): each list a passage is in adds 1 / (60 + its rank there), so the
 * number depends only on ranks. Hybrid fuses the word list (BM25) and the meaning list (dense
 * vectors): at most 2/61 ≈ 0.033, first in both. BM25 or dense alone is the same formula over one
 * list: 1/61 ≈ 0.016 for the first. A rerank (space-reranker.ts) orders by its model's own score.
 */

/** RRF's constant, as src/spaces/rank-fusion.ts has it. */
export const RRF_K = 60;

export type SearchMode = 'hybrid' | 'bm25' | 'dense';

/** What the page needs of a result to explain its order. */
export interface ScoredResult {
  score: number;
  bm25_rank: number | null;
  dense_rank: number | null;
  rerank_score?: number | undefined;
}

/** A relevance as people read it: three decimals, enough to tell 0.033 (first in both lists) from 0.016 (first in one). */
export function formatRelevance(score: number): string {
  return Number.isFinite(score) ? score.toFixed(3) : '—';
}

/** The ranks a fused score came from, in words: "word rank 1 and meaning rank 2", or one of them "only" and where it is absent. */
function rankWords(bm25: number | null, dense: number | null): string {
  if (bm25 !== null && dense !== null) return `word rank ${bm25} and meaning rank ${dense}`;
  if (bm25 !== null) return `word rank ${bm25} only; not in the meaning list`;
  if (dense !== null) return `meaning rank ${dense} only; not in the word list`;
  return 'no rank';
}

/**
 * One line per result: "relevance 0.033 (RRF of word rank 1 and meaning rank 2)"; with a rerank,
 * the reranker's score first and the fused relevance after it.
 */
export function describeScore(result: ScoredResult, mode: SearchMode): string {
  let fused: string;
  if (mode === 'hybrid') {
    fused = `relevance ${formatRelevance(result.score)} (RRF of ${rankWords(result.bm25_rank, result.dense_rank)})`;
  } else if (mode === 'bm25') {
    fused = `relevance ${formatRelevance(result.score)} (RRF of word rank ${result.bm25_rank ?? '—'})`;
  } else {
    fused = `relevance ${formatRelevance(result.score)} (RRF of meaning rank ${result.dense_rank ?? '—'})`;
  }
  if (result.rerank_score === undefined) return fused;
  return `reranker score ${formatRelevance(result.rerank_score)}; before the rerank, ${fused}`;
}

/** The legend under the results: what the number is, for the mode searched, and whether a reranker ordered them. */
export function scoreLegend(mode: SearchMode, reranker?: string): string {
  const top1 = formatRelevance(1 / (RRF_K + 1));
  const lists = mode === 'hybrid'
    ? `Relevance is reciprocal rank fusion (RRF) of two lists, words (BM25) and meaning (dense vectors): each list a passage is in adds 1 ÷ (${RRF_K} + its rank there). ${formatRelevance(2 / (RRF_K + 1))} is first in both, ${top1} first in one only.`
    : `Relevance is reciprocal rank fusion (RRF) of one list, ${mode === 'bm25' ? 'words (BM25)' : 'meaning (dense vectors)'}: 1 ÷ (${RRF_K} + rank), ${top1} for the first.`;
  const order = reranker === undefined
    ? ' Only the order counts: the number is not a percentage or a probability.'
    : ` The reranker ${reranker} read the query with each passage and ordered them by its own score (higher is more relevant).`;
  return lists + order;
}
