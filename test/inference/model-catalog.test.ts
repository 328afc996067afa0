import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ModelCatalog, ModelCatalogError, parseModelSpec } from '../../src/inference/model-catalog.ts';
import type { DiscoveryOptions } from '../../src/models/model-discovery.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';
import { buildGgufFixture } from '../helpers/gguf-fixtures.ts';
import { writeOllamaModel } from '../helpers/model-stores.ts';

const discovery = (dir: string, sources: DiscoveryOptions['sources'] = new Set()): DiscoveryOptions =>
  ({ dataDir: join(dir, 'svc'), sources, env: {}, homeDir: join(dir, 'home'), systemOllamaDir: null, indexCache: false });

test('model ids: the file base name, or ID=PATH', () => {
  assert.equal(parseModelSpec('/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf').id, 'Llama-3.2-1B-Instruct-Q4_K_M');
  assert.deepEqual(parseModelSpec('llama3=/models/x.gguf'), { id: 'llama3', path: '/models/x.gguf' });
  // An `=` inside a path is not an id separator.
  assert.equal(parseModelSpec('/odd/a=b.gguf').path, '/odd/a=b.gguf');
  // A split model is named without its part suffix, as discovery names it.
  assert.equal(parseModelSpec('/m/big-00001-of-00002.gguf').id, 'big');
});

test('flags first, then svc\'s folder and the stores, with the metadata /v1/models shows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-'));
  mkdirSync(join(dir, 'svc', 'models'), { recursive: true });
  copyFileSync(tinyModelPath(), join(dir, 'svc', 'models', 'b.gguf'));
  writeFileSync(join(dir, 'svc', 'models', 'a.GGUF'), buildGgufFixture({ architecture: 'bert', poolingType: 2, fileType: 1, contextLength: 512, embeddingLength: 384 }));
  writeFileSync(join(dir, 'svc', 'models', 'notes.txt'), 'no');
  writeFileSync(join(dir, 'svc', 'models', 'broken.gguf'), 'not a model');
  copyFileSync(tinyModelPath(), join(dir, 'explicit.gguf'));
  writeOllamaModel(join(dir, 'home', '.ollama', 'models'), { model: 'qwen', tag: 'latest' }, buildGgufFixture({ architecture: 'qwen2', chatTemplate: 't' }));
  const catalog = await ModelCatalog.load([{ id: 'mine', path: join(dir, 'explicit.gguf') }], discovery(dir, new Set(['ollama'])));
  assert.deepEqual(catalog.list().map((m) => [m.id, m.source]), [['mine', 'flag'], ['a', 'svc'], ['b', 'svc'], ['qwen:latest', 'ollama']]);
  const mine = catalog.get('mine')!;
  assert.equal(mine.architecture, 'llama');
  assert.equal(mine.quantization, 'F32');
  assert.equal(mine.contextLength, 4096);
  assert.deepEqual(mine.capabilities, ['chat']);
  assert.equal(mine.parameterCount, 147_520);
  assert.equal(mine.parameterSize, '148K');
  const bert = catalog.get('a')!;
  assert.deepEqual(bert.capabilities, ['embeddings']);
  assert.equal(bert.quantization, 'F16');
  assert.equal(bert.embeddingLength, 384);
  assert.equal(catalog.warnings.length, 1);
  assert.match(catalog.warnings[0]!, /broken\.gguf: not a GGUF file/);
  assert.equal(catalog.get('nope'), undefined);
  const empty = await ModelCatalog.load([], discovery(join(dir, 'missing')));
  assert.equal(empty.size, 0);
});

test('a flag wins over a discovered model with its id, with a warning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-'));
  mkdirSync(join(dir, 'svc', 'models'), { recursive: true });
  copyFileSync(tinyModelPath(), join(dir, 'svc', 'models', 'tiny.gguf'));
  const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }], discovery(dir));
  assert.deepEqual(catalog.list().map((m) => [m.id, m.source, m.path]), [['tiny', 'flag', tinyModelPath()]]);
  assert.equal(catalog.warnings.length, 1);
  assert.match(catalog.warnings[0]!, /^svc: tiny .* has the id of a --model flag/);
});

test('a missing, foreign or truncated flag file, or a duplicate id, is a clear error', async () => {
  await assert.rejects(ModelCatalog.load([{ id: 'x', path: '/nonexistent/x.gguf' }]), (e: unknown) => e instanceof ModelCatalogError && /not found/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-'));
  writeFileSync(join(dir, 'text.gguf'), 'hello');
  await assert.rejects(ModelCatalog.load([{ id: 't', path: join(dir, 'text.gguf') }]), /Not a GGUF model file \(not a GGUF file/);
  const whole = buildGgufFixture({ vocabSize: 100 });
  writeFileSync(join(dir, 'cut.gguf'), whole.subarray(0, 200));
  await assert.rejects(ModelCatalog.load([{ id: 'c', path: join(dir, 'cut.gguf') }]), /Not a GGUF model file \(truncated/);
  await assert.rejects(ModelCatalog.load([{ id: 'd', path: dir }]), /not a file/);
  await assert.rejects(ModelCatalog.load([{ id: 'x', path: tinyModelPath() }, { id: 'x', path: tinyModelPath() }]), /share the id/);
});

test('refresh discovers again: a new file is listed, a deleted one goes, the flags stay as read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-refresh-'));
  mkdirSync(join(dir, 'svc', 'models'), { recursive: true });
  copyFileSync(tinyModelPath(), join(dir, 'svc', 'models', 'old.gguf'));
  copyFileSync(tinyModelPath(), join(dir, 'explicit.gguf'));
  const catalog = await ModelCatalog.load([{ id: 'mine', path: join(dir, 'explicit.gguf') }], discovery(dir));
  assert.deepEqual(catalog.list().map((m) => m.id), ['mine', 'old']);
  copyFileSync(tinyModelPath(), join(dir, 'svc', 'models', 'new.gguf'));
  rmSync(join(dir, 'svc', 'models', 'old.gguf'));
  // The flag's file going away is not discovery's business: it stays as read at start-up.
  rmSync(join(dir, 'explicit.gguf'));
  await catalog.refresh();
  assert.deepEqual(catalog.list().map((m) => [m.id, m.source]), [['mine', 'flag'], ['new', 'svc']]);
  assert.equal(catalog.get('old'), undefined);
});
