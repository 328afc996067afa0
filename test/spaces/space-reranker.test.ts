/**
 * Spaces search with a rerank stage: through a real daemon with the tiny reranker fixture (the
 * scores must be the reranker's own, as /v1/rerank gives them for the same texts), and the
 * ordering rule on its own with a reranker whose scores are known.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rerankPlan, rerankResults, type Reranker } from '../../src/spaces/space-reranker.ts';
import type { SearchResult } from '../../src/spaces/space-types.ts';
import { rerankerModelPath, startDaemon, startServerProcess, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess & { dataDir: string };
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

interface SpaceAnswer {
  name: string;
  rerank: boolean | string;
  rerank_depth: number | null;
  error?: { code: string; param: string; message: string };
}

test('a space keeps a rerank default: set at creation, shown, changed by PATCH, checked like a search', async () => {
  const created = await call<SpaceAnswer>('POST', '/api/spaces', { name: 'dflt-a', rerank: 'rr', rerank_depth: 6 });
  assert.equal(created.status, 201);
  assert.deepEqual([created.body.rerank, created.body.rerank_depth], ['rr', 6]);
  assert.deepEqual(await call<SpaceAnswer>('GET', '/api/spaces/dflt-a').then((a) => [a.body.rerank, a.body.rerank_depth]), ['rr', 6]);
  const plain = await call<SpaceAnswer>('POST', '/api/spaces', { name: 'dflt-plain' });
  assert.deepEqual([plain.body.rerank, plain.body.rerank_depth], [false, null]);

  const patched = await call<SpaceAnswer>('PATCH', '/api/spaces/DFLT-PLAIN', { rerank: true });
  assert.equal(patched.status, 200);
  assert.deepEqual([patched.body.name, patched.body.rerank, patched.body.rerank_depth], ['dflt-plain', true, null]);
  assert.deepEqual(await call<SpaceAnswer>('PATCH', '/api/spaces/dflt-plain', { rerank_depth: 9 }).then((a) => [a.body.rerank, a.body.rerank_depth]), [true, 9]);
  assert.deepEqual(await call<SpaceAnswer>('PATCH', '/api/spaces/dflt-plain', { rerank: false, rerank_depth: null }).then((a) => [a.body.rerank, a.body.rerank_depth]), [false, null]);
  const listed = await call<{ data: SpaceAnswer[] }>('GET', '/api/spaces');
  assert.deepEqual(listed.body.data.filter((s) => s.name.startsWith('dflt-')).map((s) => [s.name, s.rerank, s.rerank_depth]), [['dflt-a', 'rr', 6], ['dflt-plain', false, null]]);

  // The same 400s as a search naming the model; nothing is created or changed.
  const refusals: [string, string, unknown, string, string][] = [
    ['POST', '/api/spaces', { name: 'dflt-bad', rerank: 'tiny' }, 'model_not_reranker', 'rerank'],
    ['POST', '/api/spaces', { name: 'dflt-bad', rerank: 'no-such-model' }, 'model_not_found', 'rerank'],
    ['POST', '/api/spaces', { name: 'dflt-bad', rerank_depth: 0 }, 'invalid_request', 'rerank_depth'],
    ['PATCH', '/api/spaces/dflt-a', { rerank: 'no-such-model' }, 'model_not_found', 'rerank'],
    ['PATCH', '/api/spaces/dflt-a', { rerank: null }, 'invalid_request', 'rerank'],
    ['PATCH', '/api/spaces/dflt-a', { rerank_depth: 101 }, 'invalid_request', 'rerank_depth'],
    ['PATCH', '/api/spaces/dflt-a', { name: 'renamed' }, 'invalid_request', 'name'],
  ];
  for (const [method, path, body, code, param] of refusals) {
    const answer = await call<SpaceAnswer>(method, path, body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.ok(answer.body.error!.code.endsWith(code), `${answer.body.error!.code} for ${JSON.stringify(body)}`);
    assert.equal(answer.body.error!.param, param);
  }
  assert.equal((await call('GET', '/api/spaces/dflt-bad')).status, 404);
  assert.deepEqual(await call<SpaceAnswer>('GET', '/api/spaces/dflt-a').then((a) => [a.body.rerank, a.body.rerank_depth]), ['rr', 6]);
  assert.equal((await call('PATCH', '/api/spaces/no-such-space', { rerank: false })).status, 404);
});

test('a search without rerank takes its space\'s default; rerank: false or another value in the request wins', async () => {
  for (const text of TEXTS) assert.equal((await call('POST', '/api/spaces/dflt-a/documents', { text })).status, 201);
  const query = 'why does the pump valve leak';
  const explicit = await call<SearchAnswer>('POST', '/api/spaces/dflt-a/search', { query, top_k: 3, rerank: 'rr', rerank_depth: 6 });
  assert.equal(explicit.body.reranker, 'rr');

  const byDefault = await call<SearchAnswer>('POST', '/api/spaces/dflt-a/search', { query, top_k: 3 });
  assert.equal(byDefault.status, 200);
  assert.equal(byDefault.body.reranker, 'rr');
  assert.deepEqual(byDefault.body.data, explicit.body.data, 'the default is the same search as asking for it');

  const off = await call<SearchAnswer>('POST', '/api/spaces/dflt-a/search', { query, top_k: 3, rerank: false });
  assert.equal(off.body.reranker, undefined);
  assert.ok(off.body.data.every((r) => r.rerank_score === undefined));
  // A request's own depth wins over the space's: depth 3 reranks only the fused top 3.
  const shallow = await call<SearchAnswer>('POST', '/api/spaces/dflt-a/search', { query, top_k: 3, rerank_depth: 3 });
  assert.equal(shallow.body.reranker, 'rr');
  assert.deepEqual(new Set(shallow.body.data.map((r) => r.chunk_id)), new Set(off.body.data.map((r) => r.chunk_id)));
  assert.notDeepEqual(new Set(explicit.body.data.map((r) => r.chunk_id)), new Set(off.body.data.map((r) => r.chunk_id)), 'depth 6 reaches passages fusion ranked below 3 (else the depths above prove nothing)');
  // The space's own depth is used when the request gives none.
  assert.equal((await call('PATCH', '/api/spaces/dflt-a', { rerank_depth: 3 })).status, 200);
  assert.deepEqual((await call<SearchAnswer>('POST', '/api/spaces/dflt-a/search', { query, top_k: 3 })).body.data, shallow.body.data);
  assert.equal((await call('PATCH', '/api/spaces/dflt-a', { rerank_depth: 6 })).status, 200);

  // Across spaces: the default applies only when every space searched has the same one.
  assert.equal((await call('POST', '/api/spaces', { name: 'dflt-b', rerank: 'rr' })).status, 201);
  assert.equal((await call('POST', '/api/spaces', { name: 'dflt-true', rerank: true })).status, 201);
  const across = async (spaces: string[], extra: Record<string, unknown> = {}) => (await call<SearchAnswer>('POST', '/api/search', { query, top_k: 3, spaces, ...extra })).body;
  assert.equal((await across(['dflt-a', 'dflt-b'])).reranker, 'rr');
  assert.deepEqual((await across(['dflt-a', 'dflt-b'])).data, explicit.body.data, 'the deepest depth of the spaces (6); dflt-b is empty');
  assert.equal((await across(['dflt-a', 'dflt-plain'])).reranker, undefined, 'dflt-plain has no default');
  assert.equal((await across(['dflt-a', 'dflt-true'])).reranker, undefined, 'true and "rr" are different defaults');
  assert.equal((await across(['dflt-a', 'dflt-plain'], { rerank: true })).reranker, 'rr', 'the request wins');
  assert.equal((await across(['dflt-a', 'dflt-b'], { rerank: false })).reranker, undefined);
  // All spaces (rr-docs among them, without a default): no rerank unless asked.
  assert.equal((await call<SearchAnswer>('POST', '/api/search', { query })).body.reranker, undefined);
});

test('a default naming a reranker the daemon no longer serves: the search is the same 400, saying where the rerank came from', async () => {
  // A second daemon on the same data dir, serving no reranker (as after a restart without it).
  const bare = await startServerProcess(['serve', '--port', '0', '--data-dir', daemon.dataDir]);
  try {
    const search = async (path: string, body: Record<string, unknown>) => {
      const res = await fetch(`${bare.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as SearchAnswer & { error: { code: string; param: string; message: string } } };
    };
    const named = await search('/api/spaces/dflt-a/search', { query: 'pump' });
    assert.equal(named.status, 400);
    assert.deepEqual([named.body.error.code, named.body.error.param], ['model_not_found', 'rerank']);
    assert.match(named.body.error.message, /default of space "dflt-a".*"rerank": false/);
    const first = await search('/api/spaces/dflt-true/search', { query: 'pump' });
    assert.deepEqual([first.status, first.body.error.code], [400, 'no_reranker']);
    const both = await search('/api/search', { query: 'pump', spaces: ['dflt-a', 'dflt-b'] });
    assert.deepEqual([both.status, both.body.error.code], [400, 'model_not_found']);
    assert.match(both.body.error.message, /every space searched \("dflt-a", "dflt-b"\)/);
    // Turning it off for the request searches as before.
    const off = await search('/api/spaces/dflt-a/search', { query: 'pump', rerank: false });
    assert.equal(off.status, 200);
    assert.ok(off.body.data.length > 0);
  } finally {
    assert.equal(await bare.stop(), 0);
  }
});

test('rerankPlan: the request wins, else one default shared by every space, depth never below top_k', () => {
  const space = (name: string, rerank: boolean | string, depth: number | null = null) => ({ name, rerank, rerank_depth: depth });
  assert.equal(rerankPlan({}, 8, []), null, 'no spaces, no default');
  assert.equal(rerankPlan({}, 8, [space('a', false)]), null);
  assert.deepEqual(rerankPlan({}, 8, [space('a', 'm')]), { choice: 'm', depth: 30, from: ['a'] });
  assert.deepEqual(rerankPlan({}, 8, [space('a', true, 5), space('b', true, 12)]), { choice: true, depth: 12, from: ['a', 'b'] });
  assert.equal(rerankPlan({}, 8, [space('a', 'm'), space('b', 'n')]), null);
  assert.equal(rerankPlan({}, 8, [space('a', 'm'), space('b', false)]), null);
  assert.equal(rerankPlan({ rerank: false }, 8, [space('a', 'm')]), null);
  assert.equal(rerankPlan({ rerank: null, rerank_depth: 50 }, 8, [space('a', false)]), null, 'a depth alone asks for nothing');
  assert.deepEqual(rerankPlan({ rerank: 'x' }, 8, [space('a', 'm', 4)]), { choice: 'x', depth: 8, from: 'request' }, 'the space depth 4, raised to top_k');
  assert.deepEqual(rerankPlan({ rerank: true, rerank_depth: 20 }, 8, [space('a', 'm', 40)]), { choice: true, depth: 20, from: 'request' });
});
