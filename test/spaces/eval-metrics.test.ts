import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstRelevantRank, foundOnlyBy, meanReciprocalRank, ndcgAtK, percentile, recallAtK, summarizeLatencies } from '../../src/spaces/eval/eval-metrics.ts';

test('first relevant rank is 1-based and null when nothing is relevant', () => {
  const results = ['a', 'b', 'gold', 'c', 'gold'];
  assert.equal(firstRelevantRank(results, (r) => r === 'gold'), 3);
  assert.equal(firstRelevantRank(results, (r) => r === 'a'), 1);
  assert.equal(firstRelevantRank(results, (r) => r === 'missing'), null);
  assert.equal(firstRelevantRank([], () => true), null);
});

test('recall@k counts queries whose first relevant result is within the top k', () => {
  // Hand-made ranks of five queries: hits at 1, 3, 5, 10 and a miss.
  const ranks = [1, 3, 5, 10, null];
  assert.equal(recallAtK(ranks, 1), 1 / 5);
  assert.equal(recallAtK(ranks, 4), 2 / 5);
  assert.equal(recallAtK(ranks, 5), 3 / 5);
  assert.equal(recallAtK(ranks, 9), 3 / 5);
  assert.equal(recallAtK(ranks, 10), 4 / 5);
  assert.equal(recallAtK([], 5), 0);
});

test('MRR averages 1/rank with misses and ranks past the cutoff as 0', () => {
  const ranks = [1, 2, 4, null];
  assert.equal(meanReciprocalRank(ranks), (1 + 0.5 + 0.25 + 0) / 4);
  assert.equal(meanReciprocalRank(ranks, 2), (1 + 0.5) / 4);
  assert.equal(meanReciprocalRank([12], 10), 0);
  assert.equal(meanReciprocalRank([]), 0);
});

test('two rankings of the same queries compare the way a reader expects', () => {
  // System A finds everything at rank 2; system B finds half at rank 1 and misses the rest.
  const a = [2, 2, 2, 2];
  const b = [1, 1, null, null];
  assert.equal(recallAtK(a, 1) < recallAtK(b, 1), true);
  assert.equal(recallAtK(a, 5) > recallAtK(b, 5), true);
  assert.equal(meanReciprocalRank(a), 0.5);
  assert.equal(meanReciprocalRank(b), 0.5);
});

test('percentiles are nearest-rank: always a measured sample', () => {
  const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose
  assert.equal(percentile(samples, 50), 50);
  assert.equal(percentile(samples, 99), 99);
  assert.equal(percentile(samples, 100), 100);
  assert.equal(percentile(samples, 0), 1);
  assert.equal(percentile([7], 99), 7);
  assert.equal(percentile([3, 1, 2], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.ok(Number.isNaN(percentile([], 50)));
  assert.deepEqual(samples[0], 100, 'the input is not sorted in place');
});

test('a latency summary has p50, p99, mean, max and the sample count', () => {
  const summary = summarizeLatencies([4, 1, 3, 2, 10]);
  assert.deepEqual(summary, { p50Ms: 3, p99Ms: 10, meanMs: 4, maxMs: 10, samples: 5 });
  assert.equal(summarizeLatencies([]).samples, 0);
});

test('foundOnlyBy counts the queries one system finds within k and the other does not', () => {
  const hybrid = [1, 3, null, 12, 2];
  const bm25 = [2, null, 4, 3, 11];
  assert.deepEqual(foundOnlyBy(hybrid, bm25, 10), { aOnly: 2, bOnly: 2 });
  assert.deepEqual(foundOnlyBy(hybrid, bm25, 1), { aOnly: 1, bOnly: 0 });
  assert.deepEqual(foundOnlyBy(hybrid, hybrid, 10), { aOnly: 0, bOnly: 0 });
  assert.throws(() => foundOnlyBy([1], [1, 2], 10), /different queries/);
});

test('nDCG@k with one relevant passage: 1 at rank 1, 1/log2(rank+1) within k, 0 beyond or missing', () => {
  assert.equal(ndcgAtK([1, 1], 10), 1);
  assert.equal(ndcgAtK([3], 10), 0.5);
  assert.equal(ndcgAtK([1, null, 11, 3], 10), (1 + 0 + 0 + 0.5) / 4);
  assert.equal(ndcgAtK([], 10), 0);
});
