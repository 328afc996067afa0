/**
 * Spaces search with a rerank stage: through a real daemon with the tiny reranker fixture (the
 * scores must be the reranker's own, as /v1/rerank gives them for the same texts), and the
 * ordering rule on its own with a reranker whose scores are known.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rerankResults, type Reranker } from '../../src/spaces/space-reranker.ts';
import type { SearchResult } from '../../src/spaces/space-types.ts';
import { rerankerModelPath, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ args: ['--model', `rr=${rerankerModelPath()}`] });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${daemon.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as T };
}

interface SearchAnswer {
  reranker?: string;
  data: { text: string; score: number; rerank_score?: number; chunk_id: string }[];
}

const TEXTS = [
  'The pump valve is inspected monthly by the plant team.',
  'Copper kettles tarnish in salty air near the coast.',
  'The valve of the main pump leaks when the seal is worn.',
  'Quantum models run on the local runtime.',
  'A worn pump seal makes the valve leak water.',
  'The kettle whistles when the water is hot.',
];

test('rerank: true reorders the fused candidates by the reranker\'s scores and keeps top_k', async () => {
  assert.equal((await call('POST', '/api/spaces', { name: 'rr-docs' })).status, 201);
  for (const text of TEXTS) assert.equal((await call('POST', '/api/spaces/rr-docs/documents', { text })).status, 201);
  const query = 'why does the pump valve leak';

  const fused = await call<SearchAnswer>('POST', '/api/spaces/rr-docs/search', { query, top_k: 6 });
  assert.equal(fused.status, 200);
  assert.equal(fused.body.reranker, undefined);
  assert.ok(fused.body.data.every((r) => r.rerank_score === undefined));

  const reranked = await call<SearchAnswer>('POST', '/api/spaces/rr-docs/search', { query, top_k: 3, rerank: true, rerank_depth: 6 });
  assert.equal(reranked.status, 200);
  assert.equal(reranked.body.reranker, 'rr');
  assert.equal(reranked.body.data.length, 3);
  // The reranker's own scores for the same candidates, through /v1/rerank.
  const direct = await call<{ results: { index: number; relevance_score: number }[] }>('POST', '/v1/rerank', { model: 'rr', query, documents: fused.body.data.map((r) => r.text) });
  const expected = direct.body.results.slice(0, 3).map((r) => ({ text: fused.body.data[r.index]!.text, score: r.relevance_score }));
  assert.deepEqual(reranked.body.data.map((r) => r.text), expected.map((e) => e.text));
  for (const [i, r] of reranked.body.data.entries()) assert.ok(Math.abs(r.rerank_score! - expected[i]!.score) < 1e-6);

  // Naming the model does the same; across spaces too.
  const named = await call<SearchAnswer>('POST', '/api/search', { query, top_k: 3, rerank: 'rr', rerank_depth: 6 });
  assert.equal(named.status, 200);
  assert.deepEqual(named.body.data.map((r) => r.text), expected.map((e) => e.text));
  // rerank: false is a plain search.
  assert.deepEqual((await call<SearchAnswer>('POST', '/api/spaces/rr-docs/search', { query, top_k: 6, rerank: false })).body.data, fused.body.data);
});

test('a rerank that cannot run is a 400 naming rerank', async () => {
  const cases: [unknown, string][] = [
    [{ query: 'pump', rerank: 'tiny' }, 'model_not_reranker'],
    [{ query: 'pump', rerank: 'no-such-model' }, 'model_not_found'],
    [{ query: 'pump', rerank: 3 }, 'invalid_request'],
    [{ query: 'pump', rerank: true, rerank_depth: 0 }, 'invalid_request'],
    [{ query: 'pump', rerank: true, rerank_depth: 101 }, 'invalid_request'],
  ];
  for (const [body, code] of cases) {
    const answer = await call<{ error: { code: string; param: string } }>('POST', '/api/search', body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.ok(answer.body.error.code.endsWith(code), `${answer.body.error.code} for ${JSON.stringify(body)}`);
    assert.ok(answer.body.error.param.startsWith('rerank'), answer.body.error.param);
  }
});

test('rerank: true on a daemon with no reranker says how to add one', async () => {
  const bare = await startDaemon({ withModel: false });
  try {
    const res = await fetch(`${bare.url}/api/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'pump', rerank: true }) });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'no_reranker');
    assert.match(body.error.message, /reranker/);
  } finally {
    assert.equal(await bare.stop(), 0);
  }
});

test('rerankResults orders by the reranker, keeps fused order on ties, and cuts to top_k', async () => {
  const result = (text: string, score: number): SearchResult => ({
    space: 's', chunk_id: text, document_id: 'd', title: null, source: null, page: null, heading_path: [], text, snippet: text, snippet_marks: [], score, bm25_rank: null, dense_rank: null,
  });
  const fused = [result('a', 0.05), result('b', 0.04), result('c', 0.03), result('d', 0.02)];
  const seen: string[][] = [];
  const reranker: Reranker = { id: 'fake', rank: (query, texts) => (seen.push([query, ...texts]), Promise.resolve(texts.map((t) => ({ a: 0.1, b: 0.9, c: 0.5, d: 0.5 })[t] ?? 0))) };
  const out = await rerankResults(fused, 'q', reranker, 3);
  assert.deepEqual(out.map((r) => [r.text, r.rerank_score, r.score]), [['b', 0.9, 0.04], ['c', 0.5, 0.03], ['d', 0.5, 0.02]]);
  assert.deepEqual(seen, [['q', 'a', 'b', 'c', 'd']]);
  assert.deepEqual(await rerankResults([], 'q', reranker, 3), []);
  assert.equal(seen.length, 1, 'nothing to rerank: the model is not called');
});
