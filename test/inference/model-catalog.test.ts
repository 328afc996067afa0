import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ModelCatalog, ModelCatalogError, parseModelSpec } from '../../src/inference/model-catalog.ts';

test('model ids: the file base name, or ID=PATH', () => {
  assert.equal(parseModelSpec('/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf').id, 'Llama-3.2-1B-Instruct-Q4_K_M');
  assert.deepEqual(parseModelSpec('llama3=/models/x.gguf'), { id: 'llama3', path: '/models/x.gguf' });
  // An `=` inside a path is not an id separator.
  assert.equal(parseModelSpec('/odd/a=b.gguf').path, '/odd/a=b.gguf');
});

test('explicit models first, then .gguf files from the models directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-'));
  mkdirSync(join(dir, 'models'));
  writeFileSync(join(dir, 'models', 'b.gguf'), 'GGUFx');
  writeFileSync(join(dir, 'models', 'a.GGUF'), 'GGUFxy');
  writeFileSync(join(dir, 'models', 'notes.txt'), 'no');
  writeFileSync(join(dir, 'models', 'broken.gguf'), 'not a model');
  writeFileSync(join(dir, 'explicit.gguf'), 'GGUFxyz');
  const catalog = await ModelCatalog.load([{ id: 'mine', path: join(dir, 'explicit.gguf') }], join(dir, 'models'));
  assert.deepEqual(catalog.list().map((m) => m.id), ['mine', 'a', 'b']);
  assert.equal(catalog.get('mine')?.sizeBytes, 7);
  assert.deepEqual(catalog.skipped, [join(dir, 'models', 'broken.gguf')]);
  assert.equal(catalog.get('nope'), undefined);
  const empty = await ModelCatalog.load([], join(dir, 'missing'));
  assert.equal(empty.size, 0);
});

test('a missing explicit file or a duplicate id is a clear error', async () => {
  await assert.rejects(ModelCatalog.load([{ id: 'x', path: '/nonexistent/x.gguf' }]), (e: unknown) => e instanceof ModelCatalogError && /not found/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-'));
  writeFileSync(join(dir, 'm.gguf'), 'GGUF');
  writeFileSync(join(dir, 'text.gguf'), 'hello');
  await assert.rejects(ModelCatalog.load([{ id: 't', path: join(dir, 'text.gguf') }]), /Not a GGUF/);
  await assert.rejects(ModelCatalog.load([{ id: 'x', path: join(dir, 'm.gguf') }, { id: 'x', path: join(dir, 'm.gguf') }]), /share the id/);
});
