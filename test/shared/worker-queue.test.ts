import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startWorkerThread } from '../../src/shared/start-worker-thread.ts';
import { WorkerQueue, type QueueWorker, type QueueWorkerEvents, type WorkerQueueOptions } from '../../src/shared/worker-queue.ts';

interface Reply {
  id: number;
  value?: string;
  error?: string;
}

/** A worker the test drives by hand: it replies, dies and finishes stopping when told to. */
class FakeWorker implements QueueWorker {
  readonly events: QueueWorkerEvents<Reply>;
  readonly posted: { id: number; task: string }[] = [];
  held = true;
  readonly stopping = Promise.withResolvers<void>();
  readonly #gone = Promise.withResolvers<void>();
  #stopped = false;

  constructor(events: QueueWorkerEvents<Reply>) {
    this.events = events;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  post(message: unknown): void {
    const posted = message as { id: number; task: string };
    if (posted.task === 'uncloneable') throw new Error('could not be cloned');
    this.posted.push(posted);
  }

  hold(held: boolean): void {
    this.held = held;
  }

  stop(): Promise<void> {
    this.#stopped = true;
    this.stopping.resolve();
    return this.#gone.promise;
  }

  /** The stopped worker has exited. */
  gone(): void {
    this.#gone.resolve();
  }

  /** Replies to the task it got last: its name back, or an error. */
  answer(reply: { value?: string; error?: string } = {}): void {
    const last = this.posted.at(-1)!;
    this.events.reply({ id: last.id, value: last.task, ...reply });
  }

  get tasks(): string[] {
    return this.posted.map((p) => p.task);
  }
}

function fakeQueue(options: Partial<WorkerQueueOptions<string, Reply, string, FakeWorker>> = {}) {
  const workers: FakeWorker[] = [];
  const queue = new WorkerQueue<string, Reply, string, FakeWorker>({
    start: (events) => {
      const worker = new FakeWorker(events);
      workers.push(worker);
      return worker;
    },
    message: (task, id) => ({ message: { id, task } }),
    settle: (reply) => {
      if (reply.error !== undefined) throw new Error(reply.error);
      return reply.value!;
    },
    errors: {
      full: () => new Error('full'),
      closed: () => new Error('closed'),
      timedOut: (task, ms) => new Error(`timed out: ${task} after ${ms} ms`),
      died: (cause, task) => new Error(`died: ${task}: ${(cause as Error).message}`),
      unsent: (cause, task) => new Error(`unsent: ${task}: ${(cause as Error).message}`),
    },
    ...options,
  });
  return { queue, workers };
}

/** Lets the queue see a stopped worker gone (a promise callback or two). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

test('tasks run in arrival order, one per worker; the rest wait; a stale reply is ignored', async () => {
  const { queue, workers } = fakeQueue();
  const a = queue.run('a');
  const b = queue.run('b');
  const c = queue.run('c');
  assert.equal(workers.length, 1);
  assert.deepEqual(workers[0]!.tasks, ['a']);
  assert.deepEqual([queue.running, queue.waiting, queue.pending], [1, 2, 3]);
  workers[0]!.answer();
  assert.equal(await a, 'a');
  assert.deepEqual(workers[0]!.tasks, ['a', 'b']);
  // A reply naming a task that no longer runs changes nothing.
  workers[0]!.events.reply({ id: workers[0]!.posted[0]!.id, value: 'late' });
  workers[0]!.answer({ error: 'bad input' });
  await assert.rejects(b, /^Error: bad input$/);
  workers[0]!.answer();
  assert.equal(await c, 'c');
  assert.deepEqual(workers[0]!.tasks, ['a', 'b', 'c']);
  assert.equal(workers.length, 1);
});

test('with size 2, two tasks run at once and the third goes to whichever worker is free first', async () => {
  const { queue, workers } = fakeQueue({ size: 2 });
  const runs = [queue.run('a'), queue.run('b'), queue.run('c')];
  assert.deepEqual(workers.map((w) => w.tasks), [['a'], ['b']]);
  assert.deepEqual([queue.running, queue.waiting], [2, 1]);
  workers[1]!.answer();
  assert.deepEqual(workers.map((w) => w.tasks), [['a'], ['b', 'c']]);
  workers[0]!.answer();
  workers[1]!.answer();
  assert.deepEqual(await Promise.all(runs), ['a', 'b', 'c']);
});

test('past maxPending a task is refused at once with errors.full, and nothing is sent for it', async () => {
  const { queue, workers } = fakeQueue({ maxPending: 2 });
  const a = queue.run('a');
  const b = queue.run('b');
  assert.equal(queue.room, 0);
  await assert.rejects(queue.run('c'), /^Error: full$/);
  workers[0]!.answer();
  await a;
  assert.equal(queue.room, 1);
  const d = queue.run('d');
  workers[0]!.answer();
  workers[0]!.answer();
  assert.deepEqual([await b, await d], ['b', 'd']);
  assert.deepEqual(workers[0]!.tasks, ['a', 'b', 'd']);
});

test('a task past its time limit fails alone; its worker is stopped and the next task gets a fresh one once it is gone', async () => {
  const { queue, workers } = fakeQueue();
  const hung = queue.run('hung', 5);
  const next = queue.run('next', 60_000);
  await assert.rejects(hung, /^Error: timed out: hung after 5 ms$/);
  assert.equal(workers[0]!.stopped, true);
  // The stopped worker still holds its place: nothing starts beside it.
  await settled();
  assert.equal(workers.length, 1);
  assert.deepEqual([queue.running, queue.waiting], [0, 1]);
  workers[0]!.gone();
  await settled();
  assert.equal(workers.length, 2);
  assert.deepEqual(workers[1]!.tasks, ['next']);
  assert.equal(workers[1]!.held, true);
  workers[1]!.answer();
  assert.equal(await next, 'next');
  // Idle again: it no longer keeps the process alive.
  assert.equal(workers[1]!.held, false);
});

test('a worker that dies fails only the task it ran; a second report of its death is ignored; the next task gets a fresh worker', async () => {
  const { queue, workers } = fakeQueue({ size: 2 });
  const a = queue.run('a');
  const b = queue.run('b');
  const c = queue.run('c');
  workers[0]!.events.died(new Error('out of memory'));
  workers[0]!.events.died(new Error('exited with code 1'));
  await assert.rejects(a, /^Error: died: a: out of memory$/);
  assert.equal(workers[0]!.stopped, true);
  workers[1]!.answer();
  assert.equal(await b, 'b');
  // 'c' took the free worker; the dead one's place opens once it is gone.
  assert.deepEqual(workers[1]!.tasks, ['b', 'c']);
  const d = queue.run('d');
  assert.equal(workers.length, 2);
  workers[0]!.gone();
  await settled();
  assert.deepEqual(workers[2]!.tasks, ['d']);
  workers[1]!.answer();
  workers[2]!.answer();
  assert.deepEqual([await c, await d], ['c', 'd']);
});

test('a worker that dies idle is replaced on the next task', async () => {
  const { queue, workers } = fakeQueue();
  const a = queue.run('a');
  workers[0]!.answer();
  await a;
  workers[0]!.events.died(new Error('exited'));
  assert.equal(queue.workers.length, 0);
  workers[0]!.gone();
  await settled();
  const b = queue.run('b');
  assert.deepEqual(workers[1]!.tasks, ['b']);
  workers[1]!.answer();
  assert.equal(await b, 'b');
});

test('a task whose message cannot be sent, or for which no worker starts, fails alone; the next one runs', async () => {
  const { queue, workers } = fakeQueue();
  const bad = queue.run('uncloneable');
  const good = queue.run('good');
  await assert.rejects(bad, /^Error: unsent: uncloneable: could not be cloned$/);
  // The worker got nothing and stays.
  assert.equal(workers[0]!.stopped, false);
  assert.deepEqual(workers[0]!.tasks, ['good']);
  workers[0]!.answer();
  assert.equal(await good, 'good');

  let failures = 1;
  const flaky = fakeQueue({
    start: (events) => {
      if (failures-- > 0) throw new Error('no thread');
      return new FakeWorker(events);
    },
  });
  await assert.rejects(flaky.queue.run('first'), /^Error: unsent: first: no thread$/);
  assert.equal(flaky.queue.pending, 0);
  const second = flaky.queue.run('second');
  (flaky.queue.workers[0]!).answer();
  assert.equal(await second, 'second');
});

test('close fails what runs and waits, stops the workers and refuses later tasks; stop leaves the queue open', async () => {
  const { queue, workers } = fakeQueue();
  const running = queue.run('a');
  const waiting = queue.run('b');
  const closing = queue.close();
  workers[0]!.gone();
  await closing;
  await assert.rejects(running, /^Error: closed$/);
  await assert.rejects(waiting, /^Error: closed$/);
  assert.equal(workers[0]!.stopped, true);
  assert.equal(queue.workers.length, 0);
  await assert.rejects(queue.run('c'), /^Error: closed$/);
  assert.equal(workers.length, 1);

  const open = fakeQueue();
  const before = open.queue.run('a');
  const stopping = open.queue.stop();
  open.workers[0]!.gone();
  await stopping;
  await assert.rejects(before, /^Error: closed$/);
  const after = open.queue.run('b');
  assert.deepEqual(open.workers[1]!.tasks, ['b']);
  open.workers[1]!.answer();
  assert.equal(await after, 'b');
});

test('warm starts every worker idle; with idleMs an idle worker is stopped, and a later task starts a new one', async () => {
  const warm = fakeQueue({ size: 2 });
  warm.queue.warm();
  assert.deepEqual(warm.workers.map((w) => w.held), [false, false]);

  const { queue, workers } = fakeQueue({ idleMs: 1 });
  const a = queue.run('a');
  workers[0]!.answer();
  await a;
  await workers[0]!.stopping.promise;
  assert.equal(queue.workers.length, 0);
  const b = queue.run('b');
  assert.deepEqual(workers[1]!.tasks, ['b']);
  workers[1]!.answer();
  assert.equal(await b, 'b');
});

test('on worker threads: a task that never yields is stopped at its limit, a thread that exits fails its task alone, each next task gets a fresh thread', async () => {
  type Kind = 'echo' | 'spin' | 'exit';
  const queue = new WorkerQueue<Kind, { id: number; threadId: number }, number>({
    start: (events) => startWorkerThread(new URL('./fixtures/queue-thread.ts', import.meta.url), { name: 'fixture' }, events),
    message: (kind, id) => ({ message: { id, kind } }),
    settle: (reply) => reply.threadId,
    errors: {
      full: () => new Error('full'),
      closed: () => new Error('closed'),
      timedOut: (kind) => new Error(`timed out: ${kind}`),
      died: (cause) => cause,
      unsent: (cause) => cause,
    },
  });
  try {
    const first = await queue.run('echo');
    assert.equal(await queue.run('echo'), first);
    const spin = queue.run('spin', 200);
    const afterSpin = queue.run('echo');
    await assert.rejects(spin, /^Error: timed out: spin$/);
    const second = await afterSpin;
    assert.notEqual(second, first);
    await assert.rejects(queue.run('exit'), /^Error: fixture worker exited with code 3$/);
    const third = await queue.run('echo');
    assert.notEqual(third, second);
  } finally {
    await queue.close();
  }
});

test('an aborted signal takes a waiting task out, and stops the worker of a running one; the next task gets a fresh worker', async () => {
  const { queue, workers } = fakeQueue();
  const running = new AbortController();
  const waiting = new AbortController();
  const a = queue.run('a', undefined, running.signal);
  const b = queue.run('b', undefined, waiting.signal);
  const c = queue.run('c');
  waiting.abort(new Error('cancelled b'));
  await assert.rejects(b, /^Error: cancelled b$/);
  assert.deepEqual([queue.running, queue.waiting], [1, 1]);
  running.abort(new Error('cancelled a'));
  await assert.rejects(a, /^Error: cancelled a$/);
  assert.equal(workers[0]!.stopped, true);
  workers[0]!.gone();
  await settled();
  assert.deepEqual(workers[1]!.tasks, ['c']);
  workers[1]!.answer();
  assert.equal(await c, 'c');
  // Already aborted: refused at once, nothing sent.
  await assert.rejects(queue.run('d', undefined, AbortSignal.abort(new Error('gone'))), /^Error: gone$/);
  assert.deepEqual(workers[1]!.tasks, ['c']);
});
