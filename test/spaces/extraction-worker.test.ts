import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ApiError } from '../../src/shared/api-error.ts';
import { ExtractionWorker } from '../../src/spaces/extraction-worker.ts';

// A stand-in for a parser fed hostile bytes: the first byte says how it misbehaves.
const SCRIPT = `
process.on('message', (task) => {
  const mode = task.bytes[0];
  if (mode === 1) for (;;) {}
  if (mode === 2) { const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random())); }
  if (mode === 6) { const keep = []; for (;;) keep.push(new Uint8Array(1 << 20).fill(1)); }
  if (mode === 3) setTimeout(() => { throw new Error('parser blew up'); });
  if (mode === 4) process.exit(3);
  if (mode === 5) { process.send({ id: task.id, ok: false, apiError: { status: 422, type: 'invalid_request_error', code: 'document_unreadable', message: 'bad bytes', param: 'file' }, detail: '' }); return; }
  if (mode === 0) process.send({ id: task.id, ok: true, value: { format: task.format, blocks: [{ kind: 'paragraph', text: 'read ' + task.bytes.length }] } });
});
process.on('disconnect', () => process.exit(0));
`;

let dir: string;
let script: URL;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-extraction-worker-'));
  const path = join(dir, 'parser.cjs');
  await writeFile(path, SCRIPT);
  script = pathToFileURL(path);
});
after(() => rm(dir, { recursive: true, force: true }));

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(() => assert.fail('expected a rejection'), (e: unknown) => e);
  assert.ok(error instanceof ApiError, String(error));
  return error;
}

test('extraction worker: a parser that never yields is stopped at its time limit, and the next task gets a fresh worker', async () => {
  const worker = new ExtractionWorker({ script });
  try {
    // Both are queued at once: the second's clock starts only when it reaches the worker.
    const hung = worker.run('pdf', Uint8Array.of(1), 300);
    const next = worker.run('pdf', Uint8Array.of(0, 0, 0), 30_000);
    const error = await rejection(hung);
    assert.equal(error.code, 'document_unreadable');
    assert.equal(error.status, 422);
    assert.match(error.message, /PDF took longer than 0.3 s/);
    assert.deepEqual(await next, { format: 'pdf', blocks: [{ kind: 'paragraph', text: 'read 3' }] });
  } finally {
    await worker.close();
  }
});

test('extraction worker: past its memory (heap or buffers) is document_too_complex; crashes and exits are document_unreadable', async () => {
  const worker = new ExtractionWorker({ script, memoryMb: 64 });
  try {
    const heap = await rejection(worker.run('docx', Uint8Array.of(2), 60_000));
    assert.equal(heap.code, 'document_too_complex');
    assert.equal(heap.status, 422);
    assert.match(heap.message, /more than the 64 MiB/);
    // Buffers live outside V8's heap: on Linux RLIMIT_DATA stops them, elsewhere the RSS sampler.
    const buffers = await rejection(worker.run('pdf', Uint8Array.of(6), 60_000));
    assert.equal(buffers.code, 'document_too_complex');
    const crash = await rejection(worker.run('pdf', Uint8Array.of(3), 60_000));
    assert.equal(crash.code, 'document_unreadable');
    const exit = await rejection(worker.run('pdf', Uint8Array.of(4), 60_000));
    assert.equal(exit.code, 'document_unreadable');
    const refused = await rejection(worker.run('pdf', Uint8Array.of(5), 60_000));
    assert.equal(refused.code, 'document_unreadable');
    assert.equal(refused.message, 'bad bytes');
    assert.equal((await worker.run('pdf', Uint8Array.of(0), 60_000)).blocks[0]!.text, 'read 1');
  } finally {
    await worker.close();
  }
});

test('extraction worker: past maxPending tasks are refused 503; close fails what waits; idle workers exit', async () => {
  const worker = new ExtractionWorker({ script, maxPending: 2, idleMs: 50 });
  const first = rejection(worker.run('pdf', Uint8Array.of(1), 60_000));
  const second = rejection(worker.run('pdf', Uint8Array.of(0), 60_000));
  const busy = await rejection(worker.run('pdf', Uint8Array.of(0), 60_000));
  assert.equal(busy.status, 503);
  assert.equal(busy.code, 'server_busy');
  await worker.close();
  assert.equal((await first).code, 'server_shutting_down');
  assert.equal((await second).code, 'server_shutting_down');
  assert.equal(worker.started, false);

  const idle = new ExtractionWorker({ script, idleMs: 20 });
  await idle.run('pdf', Uint8Array.of(0), 60_000);
  assert.equal(idle.started, true);
  while (idle.started) await new Promise((resolve) => setTimeout(resolve, 10));
  await idle.close();
});
