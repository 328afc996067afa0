import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AdmissionQueue, QueueFullError } from '../../src/shared/admission-queue.ts';

test('runs up to capacity, queues up to maxWaiting in FIFO order, refuses the rest', async () => {
  const queue = new AdmissionQueue(2, 2);
  const a = await queue.acquire();
  const b = await queue.acquire();
  assert.equal(queue.running, 2);
  const order: string[] = [];
  const c = queue.acquire().then((release) => { order.push('c'); return release; });
  const d = queue.acquire().then((release) => { order.push('d'); return release; });
  assert.equal(queue.waiting, 2);
  await assert.rejects(queue.acquire(), QueueFullError);
  a();
  a(); // releasing twice is harmless
  const releaseC = await c;
  assert.deepEqual(order, ['c']);
  b();
  const releaseD = await d;
  assert.deepEqual(order, ['c', 'd']);
  assert.equal(queue.running, 2);
  releaseC();
  releaseD();
  assert.equal(queue.running, 0);
  assert.equal(queue.waiting, 0);
});

test('an aborted waiter leaves the queue and rejects with the abort reason', async () => {
  const queue = new AdmissionQueue(1, 4);
  const release = await queue.acquire();
  const controller = new AbortController();
  const waiting = queue.acquire(controller.signal);
  assert.equal(queue.waiting, 1);
  controller.abort(new Error('gone'));
  await assert.rejects(waiting, /gone/);
  assert.equal(queue.waiting, 0);
  release();
  assert.equal(queue.running, 0);
});
