/**
 * Polls `ready` until it is true, pausing `pauseMs` between tries, and gives up after `attempts`
 * tries with an error naming `what`. Bounded on purpose: a loop that never ends outlives its
 * test's timeout and keeps the test file's process from exiting.
 */
export async function waitFor(ready: () => boolean | Promise<boolean>, what: string, { attempts = 600, pauseMs = 25 } = {}): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
