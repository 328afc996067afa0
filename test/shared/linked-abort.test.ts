import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkedAbort } from '../../src/shared/linked-abort.ts';

test('a linked controller aborts with the first source\'s reason, at once for one already aborted, and not after release', () => {
  const a = new AbortController();
  const b = new AbortController();
  const first = linkedAbort([a.signal, undefined, b.signal]);
  assert.equal(first.signal.aborted, false);
  b.abort(new Error('b'));
  assert.equal(first.signal.aborted, true);
  assert.equal((first.signal.reason as Error).message, 'b');
  a.abort(new Error('a'));
  assert.equal((first.signal.reason as Error).message, 'b');

  const late = linkedAbort([a.signal]);
  assert.equal(late.signal.aborted, true);
  assert.equal((late.signal.reason as Error).message, 'a');

  const c = new AbortController();
  const released = linkedAbort([c.signal]);
  released.release();
  c.abort();
  assert.equal(released.signal.aborted, false);
  // Its own abort still works: the controller is the caller's too.
  released.controller.abort(new Error('own'));
  assert.equal(released.signal.aborted, true);
});

test('released links leave no listener on a long-lived source', () => {
  const shutdown = new AbortController();
  let added = 0;
  let removed = 0;
  const add = shutdown.signal.addEventListener.bind(shutdown.signal);
  const remove = shutdown.signal.removeEventListener.bind(shutdown.signal);
  shutdown.signal.addEventListener = ((...args: Parameters<typeof add>) => { added++; add(...args); }) as typeof add;
  shutdown.signal.removeEventListener = ((...args: Parameters<typeof remove>) => { removed++; remove(...args); }) as typeof remove;
  for (let i = 0; i < 1000; i++) linkedAbort([shutdown.signal, new AbortController().signal]).release();
  assert.equal(added, 1000);
  assert.equal(removed, 1000);
});
