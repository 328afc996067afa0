import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onStopSignals } from '../../src/cli/stop-signals.ts';

// process.emit runs the listeners as a delivered signal would, without signalling the test runner.
function deliver(signal: NodeJS.Signals): void {
  process.emit(signal, signal);
}

test('the first signal stops; a repeat within a second is the same request; a later one forces', () => {
  const before = process.listenerCount('SIGWINCH');
  let clock = 0;
  const calls: string[] = [];
  const off = onStopSignals((s) => calls.push(`stop ${s}`), (s) => calls.push(`force ${s}`), ['SIGWINCH'], () => clock);
  try {
    deliver('SIGWINCH');
    clock = 400;
    deliver('SIGWINCH'); // a terminal's Ctrl-C forwarded again by a launcher
    assert.deepEqual(calls, ['stop SIGWINCH']);
    clock = 1_000;
    deliver('SIGWINCH');
    assert.deepEqual(calls, ['stop SIGWINCH', 'force SIGWINCH']);
  } finally {
    off();
  }
  assert.equal(process.listenerCount('SIGWINCH'), before, 'the returned function removes the listeners');
});
