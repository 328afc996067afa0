/**
 * Loading and unloading a model on request (POST /api/models/load|unload), on the real engine
 * with the tiny fixture GGUF: a load keeps the model resident, an unload frees it, and an
 * unload asked for while a generation runs waits for that generation instead of pulling its
 * context away.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LlamaEngine } from '../../src/inference/llama-engine.ts';
import { ModelCatalog } from '../../src/inference/model-catalog.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';

const quiet = { info() {}, warn() {}, debug() {} };

async function tinyEngine(keepAliveMs = Number.POSITIVE_INFINITY): Promise<LlamaEngine> {
  const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }]);
  return new LlamaEngine(catalog, { parallel: 2, queueSize: 4, defaultMaxTokens: 16, keepAliveMs, gpu: 'cpu', threads: 1, contextSize: 2048, log: quiet });
}

test('load makes the model resident with no request; unload frees it; both are idempotent', async (t) => {
  const engine = await tinyEngine();
  t.after(() => engine.close());
  assert.equal(engine.holds('tiny'), true);
  assert.equal(engine.holds('nope'), false);
  assert.deepEqual(engine.loadedModels(), []);
  await engine.loadModel('tiny');
  assert.deepEqual(engine.loadedModels(), ['tiny']);
  await engine.loadModel('tiny');
  assert.deepEqual(engine.loadedModels(), ['tiny']);
  assert.equal(await engine.unloadModel('tiny'), 'unloaded');
  assert.deepEqual(engine.loadedModels(), []);
  assert.equal(await engine.unloadModel('tiny'), 'unloaded');
  // The model still answers afterwards: the next request loads it again.
  const reply = await engine.model('tiny')!.chat([{ role: 'user', content: 'Hi' }], { maxTokens: 2, temperature: 0 });
  assert.ok(reply.usage.completionTokens > 0);
  assert.deepEqual(engine.loadedModels(), ['tiny']);
});

test('a loaded model follows the keep-alive like one loaded by a request (0: unloaded when the load is done)', async (t) => {
  const engine = await tinyEngine(0);
  t.after(() => engine.close());
  await engine.loadModel('tiny');
  // keep-alive 0 unloads on a zero-delay timer once the model is idle; this one, set after it, runs after it.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(engine.loadedModels(), []);
});

test('an unload during a generation waits for it: the generation completes, then the model is freed', async (t) => {
  const engine = await tinyEngine();
  t.after(() => engine.close());
  const model = engine.model('tiny')!;
  let outcome: Promise<'unloaded' | 'pending'> | undefined;
  const reply = await model.chat([{ role: 'user', content: 'Write at length.' }], {
    maxTokens: 12, temperature: 0,
    onPart: () => { outcome ??= engine.unloadModel('tiny'); },
  });
  assert.equal(await outcome, 'pending');
  assert.equal(reply.finishReason, 'length', 'the generation ran to its max_tokens, not cut off');
  assert.equal(reply.usage.completionTokens, 12);
  assert.deepEqual(engine.loadedModels(), [], 'unloaded when the generation ended');
});

test('a load asked for while an unload waits cancels the unload', async (t) => {
  const engine = await tinyEngine();
  t.after(() => engine.close());
  const model = engine.model('tiny')!;
  let unload: Promise<'unloaded' | 'pending'> | undefined;
  let load: Promise<void> | undefined;
  await model.chat([{ role: 'user', content: 'Write at length.' }], {
    maxTokens: 6, temperature: 0,
    onPart: () => {
      if (unload !== undefined) return;
      unload = engine.unloadModel('tiny');
      load = engine.loadModel('tiny');
    },
  });
  assert.equal(await unload, 'pending');
  await load;
  assert.deepEqual(engine.loadedModels(), ['tiny']);
});
