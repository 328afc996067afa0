import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimulatorCapacityError, SimulatorPool, WorkerTaskError } from '../../../src/quantum/simulator/index.ts';

const tasks = new URL('./fixtures/pool-tasks.ts', import.meta.url);
const pool = new SimulatorPool({ size: 2 });
after(() => pool.close());

test('runs a simulator task in a worker and returns its result', async () => {
  const e = await pool.run<number>(tasks, 'cubeExpectation', [Math.atan(1 / Math.SQRT2), Math.PI / 8]);
  assert.ok(Math.abs(e - 8.3094010767585) < 1e-9);
});

test('SimulatorCapacityError crosses the boundary as itself; other errors keep code and fields', async () => {
  await assert.rejects(pool.run(tasks, 'tooBig'), (e: unknown) => e instanceof SimulatorCapacityError && e.qubits === 40);
  await assert.rejects(
    pool.run(tasks, 'failWithCode'),
    (e: unknown) => e instanceof WorkerTaskError && e.message === 'bad input' && e.props['code'] === 'bad_input' && e.props['status'] === 422,
  );
  await assert.rejects(pool.run(tasks, 'noSuchExport'), /no function export/);
});

test('the event loop keeps running while workers are busy; tasks beyond the pool size queue', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const runs = [pool.run<string>(tasks, 'spin', [300]), pool.run<string>(tasks, 'spin', [300]), pool.run<string>(tasks, 'spin', [50])];
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(pool.busy, 2);
  assert.equal(pool.queued, 1);
  const ticksWhileBusy = ticks;
  assert.deepEqual(await Promise.all(runs), ['done', 'done', 'done']);
  clearInterval(timer);
  assert.ok(ticksWhileBusy >= 1, 'timers fired while the tasks were running');
});

test('abort terminates the running task and the pool recovers', async () => {
  const ac = new AbortController();
  const running = pool.run(tasks, 'spin', [60_000], { signal: ac.signal });
  setTimeout(() => ac.abort(new Error('deadline')), 30);
  await assert.rejects(running, /deadline/);
  assert.equal(await pool.run(tasks, 'spin', [1]), 'done');
});

test('SharedArrayBuffers are shared with the worker, not copied', async () => {
  const buf = new SharedArrayBuffer(8 * 4);
  assert.equal(await pool.run(tasks, 'sharedWrite', [buf]), 4);
  assert.equal(new Float64Array(buf)[0], 42);
});
