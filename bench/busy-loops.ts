/**
 * Busy-loop processes that keep cores busy beside a bench, as a test suite or a build would:
 * the "loaded machine" of the threads scenario and of `bench:inference -- --load N`.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** `count` processes, each spinning one core at normal priority until stopped. */
export function startBusyLoops(count: number): ChildProcess[] {
  return Array.from({ length: count }, () => {
    const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    child.once('error', (error) => { throw new Error(`cannot start a busy loop: ${error.message}`); });
    return child;
  });
}

export async function stopBusyLoops(loops: readonly ChildProcess[]): Promise<void> {
  await Promise.all(loops.map((child) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
    child.once('exit', resolve);
    child.kill('SIGKILL');
  })));
}
