/**
 * Loading and unloading a model on request (POST /api/models/load|unload), on the real engine
 * with the tiny fixture GGUF: a load keeps the model resident, an unload frees it, an unload
 * asked for while a generation runs (or waits) waits for it instead of pulling its context
 * away, loads that race unloads say what happened, and --max-loaded-models bounds memory.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LlamaEngine } from '../../src/inference/llama-engine.ts';
import type { LoadOutcome } from '../../src/inference/model-residency.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { ModelCatalog } from '../../src/inference/model-catalog.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
const quiet: Log = { info() {}, warn() {}, debug() {} };

/** A logger that keeps the engine's info messages, to count model loads. */
function recording(): { log: Log; messages: string[] } {
  const messages: string[] = [];
  return { messages, log: { info: (_obj: object, msg: string) => { messages.push(msg); }, warn() {}, debug() {} } };
}

async function tinyEngine(keepAliveMs = Number.POSITIVE_INFINITY, more: { parallel?: number; ids?: string[]; maxLoadedModels?: number; log?: Log } = {}): Promise<LlamaEngine> {
  // Several ids over the one fixture file: each is its own model to the engine.
  const catalog = await ModelCatalog.load((more.ids ?? ['tiny']).map((id) => ({ id, path: tinyModelPath() })));
  return new LlamaEngine(catalog, {
    parallel: more.parallel ?? 2, queueSize: 4, defaultMaxTokens: 16, keepAliveMs, gpu: 'cpu', threads: 1, contextSize: 2048,
    maxLoadedModels: more.maxLoadedModels, log: more.log ?? quiet,
  });
}

test('load makes the model resident with no request; unload frees it; both are idempotent', async (t) => {
  const engine = await tinyEngine();
  t.after(() => engine.close());
  assert.equal(engine.holds('tiny'), true);
  assert.equal(engine.holds('nope'), false);
  assert.deepEqual(engine.loadedModels(), []);
  assert.deepEqual(await engine.loadModel('tiny'), { state: 'loaded', cancelledUnload: false });
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
  let load: Promise<LoadOutcome> | undefined;
  await model.chat([{ role: 'user', content: 'Write at length.' }], {
    maxTokens: 6, temperature: 0,
    onPart: () => {
      if (unload !== undefined) return;
      unload = engine.unloadModel('tiny');
      load = engine.loadModel('tiny');
    },
  });
  assert.equal(await unload, 'pending');
  assert.deepEqual(await load, { state: 'loaded', cancelledUnload: true }, 'the load says it called the unload off');
  assert.deepEqual(engine.loadedModels(), ['tiny']);
});

test('a pending unload waits for queued requests too: they run on the loaded model, which is freed after the last, loaded once', async (t) => {
  const { log, messages } = recording();
  const engine = await tinyEngine(Number.POSITIVE_INFINITY, { parallel: 1, log });
  t.after(() => engine.close());
  const model = engine.model('tiny')!;
  let unload: Promise<'unloaded' | 'pending'> | undefined;
  let queued: Promise<unknown> | undefined;
  const first = model.chat([{ role: 'user', content: 'Write at length.' }], {
    maxTokens: 6, temperature: 0,
    onPart: () => {
      if (unload !== undefined) return;
      // One sequence: this second request waits for admission while the first runs.
      queued = model.chat([{ role: 'user', content: 'And more.' }], { maxTokens: 3, temperature: 0 });
      setImmediate(() => { unload = engine.unloadModel('tiny'); });
    },
  });
  await first;
  await queued;
  assert.equal(await unload, 'pending');
  assert.deepEqual(engine.loadedModels(), [], 'freed after the queued request, not reloaded for it');
  assert.equal(messages.filter((m) => m === 'model loaded').length, 1, 'the queued request ran on the model already loaded');
});

test('an unload asked for while a load runs wins, and the load says so rather than answering "loaded"', async (t) => {
  const engine = await tinyEngine();
  t.after(() => engine.close());
  const load = engine.loadModel('tiny');
  const unload = engine.unloadModel('tiny');
  assert.equal(await unload, 'pending');
  assert.deepEqual(await load, { state: 'unloaded-meanwhile' });
  assert.deepEqual(engine.loadedModels(), []);
  // Asked again, the load holds.
  assert.deepEqual(await engine.loadModel('tiny'), { state: 'loaded', cancelledUnload: false });
  assert.deepEqual(engine.loadedModels(), ['tiny']);
});

test('--max-loaded-models: one more model unloads the least recently used idle one; with all busy it is 503', async (t) => {
  const engine = await tinyEngine(Number.POSITIVE_INFINITY, { ids: ['a', 'b', 'c'], maxLoadedModels: 2 });
  t.after(() => engine.close());
  await engine.loadModel('a');
  await engine.loadModel('b');
  await engine.loadModel('a');
  await engine.loadModel('c');
  assert.deepEqual(engine.loadedModels().sort(), ['a', 'c'], 'b was used least recently');
  // Loads that start together count each other.
  await Promise.all([engine.loadModel('b'), engine.loadModel('c')]);
  assert.equal(engine.loadedModels().length, 2);

  const single = await tinyEngine(Number.POSITIVE_INFINITY, { ids: ['a', 'b'], maxLoadedModels: 1 });
  t.after(() => single.close());
  let refused: Promise<unknown> | undefined;
  await single.model('a')!.chat([{ role: 'user', content: 'Write at length.' }], {
    maxTokens: 4, temperature: 0,
    // Settled into a value at once: it is looked at after the generation.
    onPart: () => { refused ??= single.loadModel('b').then((outcome) => outcome, (error: unknown) => error); },
  });
  const error = await refused;
  assert.ok(error instanceof ApiError && error.status === 503 && error.code === 'model_capacity_reached' && /--max-loaded-models 1/.test(error.message), String(error));
  assert.deepEqual(single.loadedModels(), ['a'], 'the busy model kept its memory');
  // Once it is idle, the same load makes room.
  await single.loadModel('b');
  assert.deepEqual(single.loadedModels(), ['b']);
});
