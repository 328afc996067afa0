/**
 * End to end: a daemon whose HOME, OLLAMA_MODELS and HF_HOME point at a fixture machine lists
 * the models found there, shows their metadata through the official `openai` client, and
 * serves chat from a model in Ollama's store (real llama.cpp on the tiny fixture).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import type { ModelView } from '../../src/cli/model-view.ts';
import { runCli, startDaemon, startDaemonWithClient, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';
import { buildGgufFixture } from '../helpers/gguf-fixtures.ts';
import { writeHubFile, writeModelFile, writeOllamaModel } from '../helpers/model-stores.ts';

let root: string;
let env: Record<string, string>;
let daemon: DaemonProcess;
let client: OpenAI;

/** The extra fields of GET /v1/models/:id (OpenAI's type does not know them): what `svc models --json` prints too. */
interface LocalModelObject extends OpenAI.Models.Model, Omit<ModelView, 'id' | 'state'> {
  state: 'loaded' | 'not-loaded';
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-discovery-e2e-'));
  const tiny = readFileSync(tinyModelPath());
  const ollama = join(root, 'ollama');
  writeOllamaModel(ollama, { model: 'tiny-chat', tag: 'latest' }, tiny);
  writeOllamaModel(ollama, { namespace: 'someone', model: 'tiny', tag: 'q' }, tiny);
  mkdirSync(join(ollama, 'manifests', 'registry.ollama.ai', 'library', 'broken'), { recursive: true });
  writeFileSync(join(ollama, 'manifests', 'registry.ollama.ai', 'library', 'broken', 'latest'), 'not json');
  writeHubFile(join(root, 'hf', 'hub'), 'svc/Tiny-GGUF', 'e'.repeat(40), 'tiny.gguf', tiny, { main: true });
  writeModelFile(join(root, 'home', '.lmstudio', 'models', 'svc', 'Embed-GGUF', 'embed.gguf'), buildGgufFixture({ architecture: 'bert', poolingType: 2, fileType: 1, embeddingLength: 384, contextLength: 512 }));
  env = { HOME: join(root, 'home'), OLLAMA_MODELS: ollama, HF_HOME: join(root, 'hf'), SVC_DISCOVER: 'all' };
  ({ daemon, client } = await startDaemonWithClient({ env }));
});

after(async () => {
  assert.equal(await daemon.stop(), 0);
  rmSync(root, { recursive: true, force: true });
});

test('/v1/models lists the flag model and every discovered one', async () => {
  const ids = (await client.models.list()).data.map((m) => m.id);
  // The built-in embedder of knowledge spaces comes last, after every served model.
  assert.deepEqual(ids, ['tiny', 'someone/tiny:q', 'tiny-chat:latest', 'hf:svc/Tiny-GGUF/tiny', 'lmstudio:svc/Embed-GGUF/embed', 'svc-hashed-embed-v2']);
});

test('models.retrieve shows the metadata, for ids with colons and slashes', async () => {
  const model = await client.models.retrieve('tiny-chat:latest') as LocalModelObject;
  assert.equal(model.id, 'tiny-chat:latest');
  assert.equal(model.object, 'model');
  assert.equal(model.source, 'ollama');
  assert.match(model.path!, /blobs\/sha256-[0-9a-f]{64}$/);
  assert.equal(model.size_bytes, readFileSync(tinyModelPath()).length);
  assert.equal(model.arch, 'llama');
  assert.equal(model.parameter_count, 147_520);
  assert.equal(model.parameter_size, '148K');
  assert.equal(model.quantization, 'F32');
  assert.equal(model.max_context_length, 4096);
  assert.equal(model.embedding_length, 64);
  assert.deepEqual(model.capabilities, ['chat']);
  for (const id of ['someone/tiny:q', 'hf:svc/Tiny-GGUF/tiny', 'lmstudio:svc/Embed-GGUF/embed']) {
    assert.equal((await client.models.retrieve(id)).id, id);
  }
  const embed = await client.models.retrieve('lmstudio:svc/Embed-GGUF/embed') as LocalModelObject;
  assert.deepEqual([embed.arch, embed.quantization, embed.capabilities, embed.source], ['bert', 'F16', ['embeddings'], 'lmstudio']);
  // The list carries the same fields.
  const listed = (await client.models.list()).data.find((m) => m.id === 'hf:svc/Tiny-GGUF/tiny') as LocalModelObject;
  assert.deepEqual([listed.source, listed.arch, listed.quantization], ['huggingface', 'llama', 'F32']);
  await assert.rejects(client.models.retrieve('tiny-chat:nope'), (error: unknown) => error instanceof OpenAI.NotFoundError);
});

test('chat with a model from Ollama\'s store, and its state turns loaded', async () => {
  assert.equal((await client.models.retrieve('tiny-chat:latest') as LocalModelObject).state, 'not-loaded');
  const completion = await client.chat.completions.create({ model: 'tiny-chat:latest', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4, temperature: 0 });
  assert.equal(completion.model, 'tiny-chat:latest');
  assert.ok(completion.choices[0]!.message.content!.length > 0);
  assert.equal(completion.usage?.completion_tokens, 4);
  assert.equal((await client.models.retrieve('tiny-chat:latest') as LocalModelObject).state, 'loaded');
});

test('discovery warnings are logged once at start', () => {
  const warnings = daemon.logs.filter((l) => l.level === 40 && l.component === 'models').map((l) => String(l.msg));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /^ollama: broken:latest: manifest .* is not valid JSON; skipped$/);
});

test('--discover none serves the flag model only; a bad --discover value is refused', async () => {
  const bare = await startDaemon({ env: { ...env, SVC_DISCOVER: 'none' } });
  try {
    const ids = (await (await fetch(`${bare.url}/v1/models`)).json() as { data: { id: string }[] }).data.map((m) => m.id);
    assert.deepEqual(ids, ['tiny', 'svc-hashed-embed-v2']);
  } finally {
    assert.equal(await bare.stop(), 0);
  }
  const child = runCli(['serve', '--port', '0', '--discover', 'docker'], env);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr, /--discover: 'docker' is not a model source/);
});
