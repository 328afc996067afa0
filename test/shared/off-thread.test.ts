import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { OffThread } from '../../src/shared/off-thread.ts';

const JSON_BODY = new URL('../../src/shared/json-body.ts', import.meta.url);
const bytes = (text: string) => Buffer.from(text, 'utf8');

test('runs a module export on the worker; ApiErrors come back as ApiErrors', async () => {
  const offThread = new OffThread();
  try {
    const sent = new Uint8Array(bytes('{"a":[1,2]}'));
    const back = await offThread.run<Uint8Array>(JSON_BODY, 'checkJsonBody', [sent, {}], [sent.buffer]);
    // Transferred there and back: the memory moved, nothing was copied.
    assert.equal(sent.byteLength, 0);
    assert.equal(Buffer.from(back).toString(), '{"a":[1,2]}');
    await assert.rejects(offThread.run(JSON_BODY, 'checkJsonBody', [bytes('['.repeat(100)), {}]), (error: unknown) => error instanceof ApiError && error.status === 400 && error.code === 'json_too_complex');
    // Anything else is an opaque 500 whose detail stays in the cause.
    await assert.rejects(offThread.run(JSON_BODY, 'noSuchExport', []), (error: unknown) => error instanceof ApiError && error.status === 500 && error.message === 'Internal server error.');
  } finally {
    await offThread.close();
  }
});

test('refuses 503 with Retry-After beyond maxPending, and runs the rest in order', async () => {
  const offThread = new OffThread({ maxPending: 2 });
  try {
    const big = bytes(JSON.stringify(Array.from({ length: 200_000 }, (_, i) => i)));
    const first = offThread.run(JSON_BODY, 'checkJsonBody', [big, {}]);
    const second = offThread.run(JSON_BODY, 'checkJsonBody', [big, { maxValues: 10 }]);
    await assert.rejects(offThread.run(JSON_BODY, 'checkJsonBody', [big, {}]), (error: unknown) => error instanceof ApiError && error.status === 503 && error.retryAfterSeconds === 1);
    await first;
    await assert.rejects(second, (error: unknown) => error instanceof ApiError && error.code === 'json_too_complex');
  } finally {
    await offThread.close();
  }
});

test('the worker exits when idle and a new one starts for the next task; close rejects what waits', async () => {
  const offThread = new OffThread({ idleMs: 50 });
  await offThread.run(JSON_BODY, 'checkJsonBody', [bytes('[]'), {}]);
  assert.equal(offThread.started, true);
  for (let i = 0; i < 100 && offThread.started; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(offThread.started, false);
  await offThread.run(JSON_BODY, 'checkJsonBody', [bytes('{}'), {}]);
  const pending = offThread.run(JSON_BODY, 'checkJsonBody', [bytes(JSON.stringify(Array.from({ length: 300_000 }, () => 'x'))), {}]);
  const refused = assert.rejects(pending, (error: unknown) => error instanceof ApiError && error.status === 503);
  await offThread.close();
  await refused;
  await assert.rejects(offThread.run(JSON_BODY, 'checkJsonBody', [bytes('{}'), {}]), (error: unknown) => error instanceof ApiError && error.status === 503);
});

test('a task whose arguments cannot be sent fails alone; the next one runs', async () => {
  const offThread = new OffThread();
  try {
    // A function cannot be cloned: postMessage throws, and nothing may stay "running".
    await assert.rejects(offThread.run(JSON_BODY, 'checkJsonBody', [() => 1, {}]), (error: unknown) => error instanceof ApiError && error.status === 500);
    assert.equal(offThread.pending, 0);
    const back = await offThread.run<Uint8Array>(JSON_BODY, 'checkJsonBody', [bytes('[1]'), {}]);
    assert.equal(Buffer.from(back).toString(), '[1]');
  } finally {
    await offThread.close();
  }
});
