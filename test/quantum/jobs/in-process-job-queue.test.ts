import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InProcessJobQueue } from '../../../src/quantum/jobs/in-process-job-queue.ts';

/** A handler the test finishes by hand: each started job waits for its `done`. */
function manual() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const aborted: string[] = [];
  const handler = (id: string, signal: AbortSignal) => {
    started.push(id);
    signal.addEventListener('abort', () => aborted.push(id));
    return new Promise<void>((resolve) => finish.set(id, resolve));
  };
  return { started, finish, aborted, handler };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('jobs start by priority (lower first), then in arrival order, at most `concurrency` at once; a repeated id is ignored', async () => {
  const queue = new InProcessJobQueue();
  const m = manual();
  await queue.add({ id: 'a', priority: 5, lane: 'local' });
  await queue.add({ id: 'b', priority: 5, lane: 'local' });
  await queue.add({ id: 'c', priority: 1, lane: 'local' });
  await queue.add({ id: 'b', priority: 1, lane: 'local' });
  assert.deepEqual([queue.position('c'), queue.position('a'), queue.position('b')], [0, 1, 2]);
  queue.process(m.handler, 1);
  assert.deepEqual(m.started, ['c']);
  assert.deepEqual(queue.counts, { waiting: 2, running: 1 });
  m.finish.get('c')!();
  await tick();
  assert.deepEqual(m.started, ['c', 'a']);
  assert.equal(queue.position('b'), 0);
  // A waiting job cancelled never starts; a running one has its signal aborted.
  await queue.cancel('b');
  await queue.cancel('a');
  assert.deepEqual(m.aborted, ['a']);
  m.finish.get('a')!();
  await tick();
  assert.deepEqual(m.started, ['c', 'a']);
  assert.deepEqual(queue.counts, { waiting: 0, running: 0 });
  await queue.close();
});

test('close aborts what runs, drops what waits, and waits for the handlers', async () => {
  const queue = new InProcessJobQueue();
  const m = manual();
  queue.process(m.handler, 1);
  await queue.add({ id: 'x', priority: 5, lane: 'local' });
  await queue.add({ id: 'y', priority: 5, lane: 'local' });
  const closed = queue.close();
  assert.deepEqual(m.aborted, ['x']);
  m.finish.get('x')!();
  await closed;
  assert.deepEqual(m.started, ['x']);
});
