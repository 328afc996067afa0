/**
 * `POST /v1/rerank` through a real daemon with the tiny reranker fixture (qwen3 blocks, rank
 * pooling, a classification head: test/helpers/tiny-gguf.ts), in llama.cpp's response shape.
 * No rerank client ships in the openai package, so plain fetch, as Jina's and Cohere's HTTP
 * examples do. The scores are checked against node-llama-cpp's ranking context called directly
 * on the same file: the daemon runs real inference, not a stand-in.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getLlama } from 'node-llama-cpp';
import { MAX_RERANK_DOCUMENTS } from '../../src/runtime/rerank-route.ts';
import { rerankerModelPath, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

interface RerankAnswer {
  model: string;
  object: string;
  usage: { prompt_tokens: number; total_tokens: number };
  results: { index: number; relevance_score: number; document?: { text: string } }[];
}
interface ErrorAnswer {
  error: { message: string; type: string; param: string | null; code: string };
}

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ args: ['--model', `rr=${rerankerModelPath()}`] });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

async function rerank<T = RerankAnswer>(body: unknown, path = '/v1/rerank'): Promise<{ status: number; body: T }> {
  const res = await fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

const QUERY = 'what is a quantum model';
const DOCUMENTS = ['the quantum model is fast', 'water is hot', 'hello world', 'a local runtime', 'they said that'];

test('scores every document with the model, best first, in llama.cpp\'s shape', async () => {
  const { status, body } = await rerank({ model: 'rr', query: QUERY, documents: DOCUMENTS });
  assert.equal(status, 200);
  assert.equal(body.model, 'rr');
  assert.equal(body.object, 'list');
  assert.equal(body.results.length, DOCUMENTS.length);
  assert.deepEqual(body.results.map((r) => r.index).toSorted(), [0, 1, 2, 3, 4]);
  for (const [i, r] of body.results.entries()) {
    assert.ok(r.relevance_score > 0 && r.relevance_score < 1, `score ${r.relevance_score}`);
    assert.equal(r.document, undefined, 'no documents unless asked');
    if (i > 0) assert.ok(body.results[i - 1]!.relevance_score >= r.relevance_score, 'ordered by score');
  }
  assert.ok(body.usage.prompt_tokens > 0);
  assert.equal(body.usage.total_tokens, body.usage.prompt_tokens);

  // The same scores as node-llama-cpp's ranking context on the same file, in this process.
  const llama = await getLlama({ gpu: false });
  const model = await llama.loadModel({ modelPath: rerankerModelPath() });
  try {
    const context = await model.createRankingContext({ contextSize: 4096, threads: 1 });
    const direct = await context.rankAll(QUERY, DOCUMENTS);
    for (const r of body.results) assert.ok(Math.abs(r.relevance_score - direct[r.index]!) < 1e-4, `document ${r.index}: ${r.relevance_score} vs ${direct[r.index]}`);
    const lengths = DOCUMENTS.map((d) => context.calculateInputLength(QUERY, d));
    assert.equal(body.usage.prompt_tokens, lengths.reduce((a, b) => a + b, 0));
    await context.dispose();
  } finally {
    await model.dispose();
  }
});

test('top_n keeps the best n, return_documents adds the text, object documents and the alias work', async () => {
  const all = (await rerank({ model: 'rr', query: QUERY, documents: DOCUMENTS })).body.results;
  const { status, body } = await rerank({
    model: 'rr', query: QUERY, top_n: 2, return_documents: true,
    documents: DOCUMENTS.map((text, i) => (i % 2 === 0 ? { text, id: `doc-${i}` } : text)),
  }, '/v1/reranking');
  assert.equal(status, 200);
  assert.deepEqual(body.results.map((r) => r.index), all.slice(0, 2).map((r) => r.index));
  for (const r of body.results) assert.deepEqual(r.document, { text: DOCUMENTS[r.index] });
  // top_n above the count returns them all, as llama.cpp and Cohere do.
  assert.equal((await rerank({ model: 'rr', query: QUERY, documents: DOCUMENTS, top_n: 50 })).body.results.length, DOCUMENTS.length);
});

test('/v1/models lists the reranker with the rerank capability', async () => {
  const models = (await (await fetch(`${daemon.url}/v1/models`)).json()) as { data: { id: string; capabilities: string[]; arch: string | null }[] };
  const rr = models.data.find((m) => m.id === 'rr');
  assert.deepEqual(rr?.capabilities, ['rerank']);
  assert.equal(rr?.arch, 'qwen3');
  assert.deepEqual(models.data.find((m) => m.id === 'tiny')?.capabilities, ['chat']);
});

test('bad requests get a 400 naming what is wrong', async () => {
  const cases: [unknown, string, string][] = [
    [{ model: 'tiny', query: 'q', documents: ['a'] }, 'model', 'model_not_reranker'],
    [{ model: 'svc-hashed-embed-v2', query: 'q', documents: ['a'] }, 'model', 'model_not_reranker'],
    [{ model: 'rr', query: 'q', documents: [] }, 'documents', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: Array.from({ length: MAX_RERANK_DOCUMENTS + 1 }, () => 'a') }, 'documents', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: [1, 2] }, 'documents.0', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: [{ title: 'no text' }] }, 'documents.0', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: 'a' }, 'documents', 'invalid_request'],
    [{ model: 'rr', query: 7, documents: ['a'] }, 'query', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: ['a'], top_n: 0 }, 'top_n', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: ['a'], top_n: 1.5 }, 'top_n', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: ['a'], return_documents: 'yes' }, 'return_documents', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: ['a'], rank_fields: ['text'] }, 'rank_fields', 'invalid_request'],
    [{ model: 'rr', query: 'q', documents: ['a', 'hello '.repeat(5000)] }, 'documents', 'context_length_exceeded'],
  ];
  for (const [body, param, code] of cases) {
    const answer = await rerank<ErrorAnswer>(body);
    assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 100));
    assert.equal(answer.body.error.type, 'invalid_request_error');
    assert.equal(answer.body.error.code, code, answer.body.error.message);
    assert.ok(answer.body.error.param?.startsWith(param), `${answer.body.error.param} for ${param}`);
  }
  const missing = await rerank<ErrorAnswer>({ model: 'nope', query: 'q', documents: ['a'] });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'model_not_found');
  // The daemon still answers after all that.
  assert.equal((await rerank({ model: 'rr', query: 'q', documents: ['a'] })).status, 200);
});
