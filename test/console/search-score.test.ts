import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTimestamp } from '../../console/src/format.ts';
import { describeScore, formatRelevance, RRF_K, scoreLegend } from '../../console/src/search-score.ts';
import { fuseRanks, RRF_K as SERVER_RRF_K } from '../../src/spaces/rank-fusion.ts';

test('search score: the console explains the fusion the daemon does (same k, same sums)', () => {
  assert.equal(RRF_K, SERVER_RRF_K);
  const [best] = fuseRanks([['a', 'b'], ['b', 'a']]);
  // 1/61 + 1/62, rounded as people read it.
  assert.equal(formatRelevance(best!.score), '0.033');
  assert.equal(describeScore({ score: best!.score, bm25_rank: 1, dense_rank: 2 }, 'hybrid'), 'relevance 0.033 (RRF of word rank 1 and meaning rank 2)');
  assert.equal(describeScore({ score: 1 / 63, bm25_rank: null, dense_rank: 3 }, 'hybrid'), 'relevance 0.016 (RRF of meaning rank 3 only; not in the word list)');
  assert.equal(describeScore({ score: 1 / 62, bm25_rank: 2, dense_rank: null }, 'hybrid'), 'relevance 0.016 (RRF of word rank 2 only; not in the meaning list)');
  assert.equal(describeScore({ score: 1 / 61, bm25_rank: 1, dense_rank: null }, 'bm25'), 'relevance 0.016 (RRF of word rank 1)');
  assert.equal(describeScore({ score: 1 / 65, bm25_rank: null, dense_rank: 5 }, 'dense'), 'relevance 0.015 (RRF of meaning rank 5)');
  assert.match(describeScore({ score: 2 / 61, bm25_rank: 1, dense_rank: 1, rerank_score: 0.91234 }, 'hybrid'), /^reranker score 0\.912; before the rerank, relevance 0\.033/);
});

test('search score: the legend says what the number is for each mode', () => {
  assert.match(scoreLegend('hybrid'), /reciprocal rank fusion.*1 ÷ \(60 \+ its rank there\)\. 0\.033 is first in both, 0\.016 first in one only/);
  assert.match(scoreLegend('bm25'), /one list, words \(BM25\)/);
  assert.match(scoreLegend('dense'), /meaning \(dense vectors\)/);
  assert.match(scoreLegend('hybrid', 'bge-reranker'), /reranker bge-reranker read the query/);
});

test('timestamps: UTC to the minute, the zone always said; text that is no date as it is', () => {
  assert.equal(formatTimestamp('2026-11-28T15:04:59.123Z'), '2026-11-28 15:04 UTC');
  assert.equal(formatTimestamp('2026-11-28T16:04:00+01:00'), '2026-11-28 15:04 UTC');
  assert.equal(formatTimestamp('not a date'), 'not a date');
});
