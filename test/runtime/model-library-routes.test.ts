/**
 * POST /v1/models/pull and DELETE /v1/models/{id} on a real `svc serve`, pulling from the mock
 * hub (test/helpers/mock-hub.ts): progress arrives as Server-Sent Events, the new model is listed
 * at once, a client that goes away stops its pull, and every refusal is in the envelope.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import fc from 'fast-check';
import { startDaemon } from '../helpers/daemon-process.ts';
import { startMockHub, type MockHub } from '../helpers/mock-hub.ts';
import { buildTinyGguf } from '../helpers/tiny-gguf.ts';

const q4 = buildTinyGguf({ seed: 21 });
const q8 = buildTinyGguf({ seed: 22 });
const PULLED_ID = 'hf:acme/Tiny-GGUF/tiny-Q4_K_M';

interface ErrorAnswer { error: { message: string; type: string; code: string; param: string | null } }
type PullEventData = Record<string, unknown> & { status?: string; error?: ErrorAnswer['error'] };

let hub: MockHub;
let daemon: Awaited<ReturnType<typeof startDaemon>>;
before(async () => {
  hub = await startMockHub({ repos: [{ owner: 'acme', repo: 'Tiny-GGUF', files: { 'tiny-Q4_K_M.gguf': q4, 'tiny-Q8_0.gguf': q8, 'README.md': Buffer.from('hi') } }] });
  daemon = await startDaemon({ env: { HF_ENDPOINT: hub.url, HF_TOKEN: '' } });
});
after(async () => {
  await daemon.stop();
  await hub.close();
});
beforeEach(() => {
  Object.assign(hub.faults, { throttleBytesPerSecond: 0, dropAfterBytes: 0, dropTimes: 0, ignoreRange: false, corrupt: false, hideChecksums: false, fileStatus: 0 });
});

const pull = (body: unknown, signal?: AbortSignal) => fetch(`${daemon.url}/v1/models/pull`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
const remove = (id: string) => fetch(`${daemon.url}/v1/models/${encodeURIComponent(id)}`, { method: 'DELETE' });
const listed = async () => ((await (await fetch(`${daemon.url}/v1/models`)).json()) as { data: { id: string; quantization: string | null; size_bytes: number | null }[] }).data;

/** Reads the SSE events of a pull answer to its end. */
async function events(response: Response): Promise<PullEventData[]> {
  const text = await response.text();
  return text.split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]').map((e) => JSON.parse(e.slice(6)) as PullEventData);
}

test('a pull streams its progress, ends with the model, and /v1/models lists it; delete removes it', { timeout: 60_000 }, async () => {
  assert.ok(!(await listed()).some((m) => m.id === PULLED_ID));
  const response = await pull({ model: 'hf:acme/Tiny-GGUF:Q4_K_M' });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const seen = await events(response);
  const statuses = seen.map((e) => e.status);
  assert.equal(statuses[0], 'resolved');
  assert.equal(seen[0]!.id, PULLED_ID);
  assert.equal(seen[0]!.total, q4.length, 'the resolved event carries the bytes to come');
  const downloads = seen.filter((e) => e.status === 'downloading');
  assert.ok(downloads.length >= 1, `downloading events: ${statuses.join(',')}`);
  for (const d of downloads) assert.equal(d.total, q4.length);
  assert.ok(statuses.includes('verifying'), statuses.join(','));
  const last = seen.at(-1)!;
  assert.equal(last.status, 'success');
  assert.equal(last.id, PULLED_ID);
  assert.equal(last.object, 'model');
  assert.equal(last.size_bytes, q4.length);

  const model = (await listed()).find((m) => m.id === PULLED_ID);
  assert.ok(model !== undefined, 'the pulled model is listed without a restart');
  assert.equal(model.quantization, 'F32', 'the quantization read from the GGUF header (the tiny fixture is F32)');

  // Again: already there, nothing downloaded; the non-streaming answer is the model object.
  const again = await pull({ model: 'hf:acme/Tiny-GGUF:Q4_K_M', stream: false });
  assert.equal(again.status, 200);
  const body = await again.json() as { status: string; id: string; files: { already_present: boolean }[] };
  assert.equal(body.status, 'success');
  assert.equal(body.id, PULLED_ID);
  assert.equal(body.files[0]!.already_present, true);

  const deleted = await remove(PULLED_ID);
  assert.equal(deleted.status, 200);
  assert.deepEqual(await deleted.json(), { id: PULLED_ID, object: 'model', deleted: true });
  assert.ok(!(await listed()).some((m) => m.id === PULLED_ID), 'gone from /v1/models');
  assert.equal(existsSync(join(daemon.dataDir, 'models', 'hf', 'acme')), false, 'its file and empty folders are gone');
  const twice = await remove(PULLED_ID);
  assert.equal(twice.status, 404);
  assert.equal(((await twice.json()) as ErrorAnswer).error.code, 'model_not_found');
});

test('bad references and bodies are 4xx in the envelope, before any stream', { timeout: 60_000 }, async () => {
  const cases: { body: unknown; status: number; code: string; param?: string }[] = [
    { body: { model: 'not a reference' }, status: 400, code: 'invalid_reference', param: 'model' },
    { body: { model: '' }, status: 400, code: 'invalid_request', param: 'model' },
    { body: {}, status: 400, code: 'invalid_request', param: 'model' },
    { body: { model: 'hf:acme/Tiny-GGUF:Q4_K_M', insecure: true }, status: 400, code: 'invalid_request', param: 'insecure' },
    { body: { model: 'hf:acme/Tiny-GGUF:Q4_K_M', force: 'yes' }, status: 400, code: 'invalid_request', param: 'force' },
    { body: { model: 'hf:acme/No-Such-Repo:Q4_K_M' }, status: 404, code: 'repo_not_found', param: 'model' },
    { body: { model: 'hf:acme/Tiny-GGUF/missing.gguf' }, status: 404, code: 'file_not_found', param: 'model' },
    { body: { model: 'hf:acme/Tiny-GGUF:Q2_K' }, status: 404, code: 'no_match', param: 'model' },
    { body: { model: 'https://example.invalid/readme.txt' }, status: 400, code: 'invalid_reference', param: 'model' },
    { body: { model: 'hf:acme/Tiny-GGUF:Q4_K_M', padding: 'x'.repeat(70_000) }, status: 413, code: 'request_too_large' },
  ];
  for (const c of cases) {
    const response = await pull(c.body);
    const label = JSON.stringify(c.body);
    assert.equal(response.status, c.status, label);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/, label);
    const { error } = (await response.json()) as ErrorAnswer;
    assert.equal(error.code, c.code, `${label}: ${error.message}`);
    if (c.param !== undefined) assert.equal(error.param, c.param, label);
    assert.doesNotMatch(error.message, /--force|--sha256/, 'no CLI flags in an API message');
  }
  assert.ok(!(await listed()).some((m) => m.id.startsWith('hf:acme/')), 'nothing pulled');

  // Whatever JSON arrives as the body or the reference, the answer is a 4xx in the envelope, never a 5xx.
  await fc.assert(fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.record({ model: fc.string({ maxLength: 60 }) })), async (body) => {
    const response = await pull({ ...(typeof body === 'object' && body !== null && !Array.isArray(body) ? body : { model: body }), stream: false });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body)} → ${response.status}`);
    assert.equal(typeof ((await response.json()) as ErrorAnswer).error.code, 'string');
  }), { numRuns: 60 });
});

test('a second pull of the same reference is 409; a client that goes away stops its pull', { timeout: 60_000 }, async () => {
  hub.faults.throttleBytesPerSecond = 40_000;
  const controller = new AbortController();
  const first = await pull({ model: 'hf:acme/Tiny-GGUF/tiny-Q8_0.gguf' }, controller.signal);
  assert.equal(first.status, 200);
  const reader = first.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('"downloading"')) {
    const { value, done } = await reader.read();
    assert.equal(done, false, `the stream ended before any progress: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const second = await pull({ model: 'hf:acme/Tiny-GGUF/tiny-Q8_0.gguf' });
  assert.equal(second.status, 409);
  assert.equal(((await second.json()) as ErrorAnswer).error.code, 'pull_in_progress');

  controller.abort();
  // The pull ends on the daemon: the same reference may be pulled again (no timing: wait for it).
  const partial = join(daemon.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  let retry: Response;
  for (;;) {
    hub.faults.throttleBytesPerSecond = 0;
    retry = await pull({ model: 'hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', stream: false });
    if (retry.status !== 409) break;
    await retry.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(retry.status, 200);
  const done = await retry.json() as { id: string; files: { bytes: number }[] };
  assert.equal(done.id, 'hf:acme/Tiny-GGUF/tiny-Q8_0');
  assert.equal(done.files[0]!.bytes, q8.length);
  assert.ok(readdirSync(partial).includes('tiny-Q8_0.gguf'));
  const removed = await remove(done.id);
  assert.equal(removed.status, 200);
});

test('delete refuses a loaded model, a model svc does not own, and a built-in one', { timeout: 120_000 }, async () => {
  const pulled = await pull({ model: 'hf:acme/Tiny-GGUF:Q4_K_M', stream: false });
  assert.equal(pulled.status, 200);
  const load = await fetch(`${daemon.url}/api/models/load`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: PULLED_ID }) });
  assert.equal(load.status, 200, await load.clone().text());
  const loaded = await remove(PULLED_ID);
  assert.equal(loaded.status, 409);
  const loadedError = ((await loaded.json()) as ErrorAnswer).error;
  assert.equal(loadedError.code, 'model_in_use');
  assert.match(loadedError.message, /unload it first/);
  assert.ok((await listed()).some((m) => m.id === PULLED_ID), 'still there');

  const unload = await fetch(`${daemon.url}/api/models/unload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: PULLED_ID }) });
  assert.equal(unload.status, 200);
  assert.equal((await remove(PULLED_ID)).status, 200, 'unloaded, it can go');

  // `tiny` is a --model flag: its file is the user's, not svc's.
  const flag = await remove('tiny');
  assert.equal(flag.status, 409);
  assert.equal(((await flag.json()) as ErrorAnswer).error.code, 'model_not_removable');
  const builtin = (await listed()).find((m) => !m.id.startsWith('hf:') && m.id !== 'tiny');
  assert.ok(builtin !== undefined, 'the built-in embedder is listed');
  const refused = await remove(builtin.id);
  assert.equal(refused.status, 409);
  assert.equal(((await refused.json()) as ErrorAnswer).error.code, 'model_not_removable');
  const unknown = await remove('no-such-model');
  assert.equal(unknown.status, 404);
  assert.equal(((await unknown.json()) as ErrorAnswer).error.code, 'model_not_found');
});
