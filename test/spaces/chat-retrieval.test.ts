import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { rerankerModelPath, startServerProcess, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';

/**
 * Retrieval in chat through the official OpenAI client, which sends svc's `spaces` field as an
 * extra body field: citations beside `choices` (streamed: on the finishing chunk), the sources in
 * the prompt, and `retrieval_unavailable` when the space's embedder is not the daemon's.
 */
let dataDir: string;
let daemon: DaemonProcess;
let client: OpenAI;

async function start(extra: string[] = [], options: { reranker?: boolean } = {}): Promise<void> {
  const reranker = options.reranker === false ? [] : ['--model', `rr=${rerankerModelPath()}`];
  daemon = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--discover', 'none', '--model', `tiny=${tinyModelPath()}`, ...reranker, ...extra]);
  client = new OpenAI({ baseURL: `${daemon.url}/v1`, apiKey: 'none', maxRetries: 0 });
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${daemon.url}/api${path}`, {
    method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Retrieval {
  status: string;
  spaces: string[];
  query: string;
  citations: { index: number; space: string; document_id: string; snippet: string; title: string | null; rerank_score?: number }[];
  reranker?: string;
  error?: { code: string; message: string };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-chat-'));
  await start();
  await api('POST', '/spaces', { name: 'garden' });
  await api('POST', '/spaces/garden/documents', { text: 'Tomatoes need staking once they reach forty centimetres.', title: 'Tomatoes' });
  await api('POST', '/spaces/garden/documents', { text: 'Garlic is planted in October and lifted in July.', title: 'Garlic' });
});

after(async () => {
  await daemon.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

// The OpenAI client passes fields it does not know through to the body, as svc's users send them.
type WithSpaces = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & { spaces: string[]; retrieval?: { top_k?: number; mode?: string } };

test('chat with spaces: citations beside choices, numbered as the model saw them', async () => {
  const completion = await client.chat.completions.create({
    model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'When do tomatoes need staking?' }], spaces: ['garden'],
  } as WithSpaces);
  const retrieval = (completion as unknown as { svc_retrieval: Retrieval }).svc_retrieval;
  assert.equal(retrieval.status, 'ok');
  assert.deepEqual(retrieval.spaces, ['garden']);
  assert.equal(retrieval.query, 'When do tomatoes need staking?');
  assert.equal(retrieval.citations[0]?.index, 1);
  assert.equal(retrieval.citations[0]?.title, 'Tomatoes');
  assert.ok(completion.choices[0]?.message !== undefined);
  // The prompt grew by the sources: more prompt tokens than the same question without spaces.
  const plain = await client.chat.completions.create({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'When do tomatoes need staking?' }] });
  assert.ok(completion.usage!.prompt_tokens > plain.usage!.prompt_tokens + 10);
  assert.equal((plain as unknown as { svc_retrieval?: unknown }).svc_retrieval, undefined);
});

test('chat with spaces, streamed: the finishing chunk carries svc_retrieval', async () => {
  const stream = await client.chat.completions.create({
    model: 'tiny', max_tokens: 4, stream: true, messages: [{ role: 'user', content: 'When is garlic planted?' }], spaces: ['garden'], retrieval: { top_k: 1 },
  } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
  const chunks: Record<string, unknown>[] = [];
  for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
  const carrying = chunks.filter((c) => c.svc_retrieval !== undefined);
  assert.equal(carrying.length, 1);
  const finishing = carrying[0] as { choices: { finish_reason: string | null }[]; svc_retrieval: Retrieval };
  assert.notEqual(finishing.choices[0]?.finish_reason, null);
  assert.equal(finishing.svc_retrieval.citations.length, 1);
  assert.equal(finishing.svc_retrieval.citations[0]?.title, 'Garlic');
});

test('chat with spaces: unknown spaces are 404, bad retrieval options 400, no hit is no_results', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }], spaces: ['nope'] } as WithSpaces),
    (error: unknown) => error instanceof OpenAI.NotFoundError,
  );
  await assert.rejects(
    client.chat.completions.create({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }], spaces: ['garden'], retrieval: { top_k: 0 } } as WithSpaces),
    (error: unknown) => error instanceof OpenAI.BadRequestError,
  );
  await assert.rejects(
    client.chat.completions.create({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }], spaces: [] } as WithSpaces),
    (error: unknown) => error instanceof OpenAI.BadRequestError,
  );
  const none = await client.chat.completions.create({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'zzyzx qqqq' }], spaces: ['garden'], retrieval: { mode: 'bm25' } } as WithSpaces);
  const retrieval = (none as unknown as { svc_retrieval: Retrieval }).svc_retrieval;
  assert.equal(retrieval.status, 'no_results');
  assert.deepEqual(retrieval.citations, []);
});

test('chat with spaces: a space whose embedder is not available answers retrieval_unavailable, logged by class, never as zero hits', async () => {
  // The space's vectors come from the tiny model; the daemon restarted without that embedder
  // cannot search them densely and must not mix vectors.
  await daemon.stop();
  await start(['--spaces-embedder', 'tiny']);
  const created = await api('POST', '/spaces', { name: 'tiny-vectors' });
  assert.equal(created.body.embedder, 'tiny');
  await api('POST', '/spaces/tiny-vectors/documents', { text: 'Hedgehogs hibernate from November to March.' });
  await daemon.stop();
  await start();
  const completion = await client.chat.completions.create({
    model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'When do hedgehogs hibernate?' }], spaces: ['tiny-vectors'],
  } as WithSpaces);
  const retrieval = (completion as unknown as { svc_retrieval: Retrieval }).svc_retrieval;
  assert.equal(retrieval.status, 'retrieval_unavailable');
  assert.deepEqual(retrieval.citations, []);
  assert.equal(retrieval.error?.code, 'reindex_required');
  assert.ok(daemon.logs.some((l) => l.failure_class === 'retrieval_unavailable'));
  // BM25 needs no vectors and still answers.
  const bm25 = await client.chat.completions.create({
    model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'When do hedgehogs hibernate?' }], spaces: ['tiny-vectors'], retrieval: { mode: 'bm25' },
  } as WithSpaces);
  assert.equal((bm25 as unknown as { svc_retrieval: Retrieval }).svc_retrieval.status, 'ok');
  // Reindexing moves the space to the daemon's embedder, and hybrid works again.
  const reindexed = await api('POST', '/spaces/tiny-vectors/reindex');
  assert.equal(reindexed.status, 200, JSON.stringify(reindexed.body));
  assert.equal(reindexed.body.embedder, 'svc-hashed-embed-v2');
  const again = await client.chat.completions.create({
    model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'When do hedgehogs hibernate?' }], spaces: ['tiny-vectors'],
  } as WithSpaces);
  assert.equal((again as unknown as { svc_retrieval: Retrieval }).svc_retrieval.status, 'ok');
});

test('embeddings: the built-in embedder through the OpenAI client; it does not chat', async () => {
  const result = await client.embeddings.create({ model: 'svc-hashed-embed-v2', input: ['hello world', 'hello world'] });
  assert.equal(result.data.length, 2);
  assert.deepEqual(result.data[0]!.embedding, result.data[1]!.embedding);
  const norm = Math.hypot(...result.data[0]!.embedding);
  assert.ok(Math.abs(norm - 1) < 1e-4);
  await assert.rejects(
    client.chat.completions.create({ model: 'svc-hashed-embed-v2', messages: [{ role: 'user', content: 'hi' }] }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && /embedding model/.test(error.message),
  );
});

test('chat with spaces: the spaces\' rerank default orders the sources; a reranker no longer served is retrieval_unavailable', async () => {
  const ask = async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'When do tomatoes need staking?' }], spaces: ['garden'], retrieval: { top_k: 2 },
    } as WithSpaces);
    return (completion as unknown as { svc_retrieval: Retrieval }).svc_retrieval;
  };
  const plain = await ask();
  assert.equal(plain.reranker, undefined);
  assert.ok(plain.citations.every((c) => c.rerank_score === undefined));

  assert.equal((await api('PATCH', '/spaces/garden', { rerank: 'rr' })).status, 200);
  const reranked = await ask();
  assert.equal(reranked.status, 'ok');
  assert.equal(reranked.reranker, 'rr');
  assert.equal(reranked.citations.length, 2);
  // The same order and scores as the search API gives with the same default.
  const search = await api('POST', '/spaces/garden/search', { query: 'When do tomatoes need staking?', top_k: 2 });
  const data = search.body.data as { chunk_id: string; rerank_score: number; document_id: string }[];
  assert.equal(search.body.reranker, 'rr');
  assert.deepEqual(reranked.citations.map((c) => [c.document_id, c.rerank_score]), data.map((r) => [r.document_id, r.rerank_score]));

  await daemon.stop();
  await start([], { reranker: false });
  const unavailable = await ask();
  assert.equal(unavailable.status, 'retrieval_unavailable');
  assert.equal(unavailable.error?.code, 'model_not_found');
  assert.deepEqual(unavailable.citations, []);
  // The default is turned off with a PATCH (false needs no reranker), and the sources come back.
  assert.equal((await api('PATCH', '/spaces/garden', { rerank: false })).status, 200);
  assert.equal((await ask()).status, 'ok');
});
