/**
 * POST /api/models/load and /api/models/unload on a real `svc serve` with the tiny fixture
 * GGUF: the state /v1/models reports follows them, and bad input gets the local error envelope.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { startDaemon, tinyModelPath, waitForHealth } from '../helpers/daemon-process.ts';

interface ModelAnswer { id: string; object: string; state: string; memory_bytes: number | null; size_bytes: number }
interface ErrorAnswer { error: { message: string; type: string; code: string; param: string | null } }

test('load and unload through the API, /v1/models following; refusals in the envelope', { timeout: 120_000 }, async (t) => {
  const daemon = await startDaemon();
  t.after(() => daemon.stop());
  const post = async (path: string, body: unknown, contentType = 'application/json') => {
    const response = await fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: response.status, json: await response.json() as unknown };
  };
  const modelNow = async () => (await (await fetch(`${daemon.url}/v1/models/tiny`)).json()) as ModelAnswer;
  const stateOf = async () => (await modelNow()).state;

  assert.equal(await stateOf(), 'not-loaded');
  assert.equal((await modelNow()).memory_bytes, null, 'nothing in memory before a load');
  const loaded = await post('/api/models/load', { model: 'tiny' });
  assert.equal(loaded.status, 200);
  assert.equal((loaded.json as ModelAnswer).id, 'tiny');
  assert.equal((loaded.json as ModelAnswer).object, 'model');
  assert.equal((loaded.json as ModelAnswer).state, 'loaded');
  assert.equal(await stateOf(), 'loaded');
  // Weights plus the context's state, as node-llama-cpp reports them: some bytes, a number.
  const memory = (await modelNow()).memory_bytes;
  assert.ok(typeof memory === 'number' && memory > 0, `memory_bytes while loaded: ${memory}`);
  assert.equal((loaded.json as ModelAnswer).memory_bytes, memory, 'the load answer says the same');
  const health = await (await fetch(`${daemon.url}/health`)).json() as { model: { loaded: string[] } };
  assert.deepEqual(health.model.loaded, ['tiny']);

  const unloaded = await post('/api/models/unload', { model: 'tiny' });
  assert.equal(unloaded.status, 200);
  assert.equal((unloaded.json as ModelAnswer).state, 'not-loaded');
  assert.equal(await stateOf(), 'not-loaded');
  assert.equal((await modelNow()).memory_bytes, null, 'memory_bytes is null again after the unload');
  // Unloading what is not loaded is no error.
  assert.equal((await post('/api/models/unload', { model: 'tiny' })).status, 200);

  const refusals: { path: string; body: unknown; contentType?: string; status: number; code: string; param?: string | null }[] = [
    { path: '/api/models/load', body: { model: 'no-such-model' }, status: 404, code: 'model_not_found', param: 'model' },
    { path: '/api/models/unload', body: { model: 'no-such-model' }, status: 404, code: 'model_not_found', param: 'model' },
    { path: '/api/models/load', body: {}, status: 400, code: 'invalid_request', param: 'model' },
    { path: '/api/models/load', body: { model: 7 }, status: 400, code: 'invalid_request', param: 'model' },
    { path: '/api/models/load', body: { model: 'tiny', keep_alive: 0 }, status: 400, code: 'invalid_request', param: 'keep_alive' },
    { path: '/api/models/load', body: { model: 'x'.repeat(5000) }, status: 400, code: 'invalid_request', param: 'model' },
    { path: '/api/models/load', body: '[]', status: 400, code: 'invalid_request' },
    { path: '/api/models/load', body: '{"model":', status: 400, code: 'invalid_json' },
    { path: '/api/models/load', body: 'model=tiny', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
    // A body far past what `{"model": id}` needs is refused as it arrives, never parsed.
    { path: '/api/models/unload', body: { model: 'tiny', padding: 'x'.repeat(70_000) }, status: 413, code: 'request_too_large' },
  ];
  for (const r of refusals) {
    const { status, json } = await post(r.path, r.body, r.contentType);
    const label = `${r.path} ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body).slice(0, 60)}`;
    assert.equal(status, r.status, label);
    assert.equal((json as ErrorAnswer).error.code, r.code, label);
    assert.equal(typeof (json as ErrorAnswer).error.message, 'string', label);
    if (r.param !== undefined) assert.equal((json as ErrorAnswer).error.param, r.param, label);
  }
  // The built-in spaces embedder is listed but has nothing to load.
  const models = await (await fetch(`${daemon.url}/v1/models`)).json() as { data: { id: string; source: string | null }[] };
  const builtin = models.data.find((m) => m.source === 'builtin');
  assert.ok(builtin !== undefined, 'the daemon lists its built-in embedder');
  const { status, json } = await post('/api/models/unload', { model: builtin.id });
  assert.equal(status, 400);
  assert.equal((json as ErrorAnswer).error.code, 'model_not_loadable');
  assert.match((json as ErrorAnswer).error.message, /built in/);
  assert.equal(await stateOf(), 'not-loaded', 'no refusal loaded anything');

  // Whatever JSON arrives, the answer is the model or a 4xx in the envelope: never a 5xx.
  await fc.assert(fc.asyncProperty(fc.oneof(fc.json(), fc.record({ model: fc.string({ maxLength: 300 }) }).map((b) => JSON.stringify(b))), fc.boolean(), async (body, unload) => {
    const { status, json } = await post(unload ? '/api/models/unload' : '/api/models/load', body);
    assert.ok(status < 500, `${status} for ${body.slice(0, 100)}`);
    if (status >= 400) assert.equal(typeof (json as ErrorAnswer).error.code, 'string');
  }), { numRuns: 60, seed: 14 });
});

test('a model llama.cpp cannot load is 500 model_load_failed in the envelope; load and unload sent together answer truthfully', { timeout: 120_000 }, async (t) => {
  // A copy of the fixture, cut short after the daemon read its header: the catalog lists it,
  // llama.cpp cannot load it (as with a file damaged or replaced on disk).
  const dir = mkdtempSync(join(tmpdir(), 'svc-residency-'));
  const broken = join(dir, 'broken.gguf');
  copyFileSync(tinyModelPath(), broken);
  const daemon = await startDaemon({ args: ['--model', `broken=${broken}`, '--keep-alive', 'forever'] });
  t.after(async () => {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  truncateSync(broken, 4096);
  const post = async (path: string, model: string) => {
    const response = await fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model }) });
    return { status: response.status, json: await response.json() as ModelAnswer & ErrorAnswer };
  };
  const failed = await post('/api/models/load', 'broken');
  assert.equal(failed.status, 500);
  assert.deepEqual([failed.json.error.type, failed.json.error.code], ['server_error', 'model_load_failed']);
  assert.doesNotMatch(failed.json.error.message, /gguf|\/tmp\//i, 'a 5xx says nothing of the internals (the log has them)');
  assert.equal(((await (await fetch(`${daemon.url}/v1/models/broken`)).json()) as ModelAnswer).state, 'not-loaded');

  // Load and unload at once, several times: every answer is one the state bears out. A load
  // that an unload overtook says 409 model_unloaded_meanwhile, never 200 with "not-loaded".
  const seen = new Set<string>();
  for (let round = 0; round < 6; round++) {
    const [load, unload] = await Promise.all([post('/api/models/load', 'tiny'), post('/api/models/unload', 'tiny')]);
    seen.add(`${load.status}/${unload.status}`);
    assert.ok(load.status === 200 || load.status === 409, `load ${load.status}`);
    if (load.status === 200) assert.equal(load.json.state, 'loaded');
    else assert.equal(load.json.error.code, 'model_unloaded_meanwhile');
    assert.ok((unload.status === 200 && unload.json.state === 'not-loaded') || (unload.status === 202 && unload.json.state === 'unloading'), `unload ${unload.status} ${unload.json.state}`);
    await waitForHealth(daemon.url, (h) => h.model.active === 0);
    const state = ((await (await fetch(`${daemon.url}/v1/models/tiny`)).json()) as ModelAnswer).state;
    // The unload won (it waited for the load): the model is out.
    if (load.status === 409 || unload.status === 202) assert.equal(state, 'not-loaded', `round ${round}: ${[...seen].join(', ')}`);
    // Make each round start from the same place.
    await post('/api/models/unload', 'tiny');
  }
});
