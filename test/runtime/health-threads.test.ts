/**
 * Without --threads the daemon runs llama.cpp on physical cores − 1 (at least 1) rather than
 * node-llama-cpp's default of at least 4, and says so in /health and its start-up line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultThreads } from '../../src/inference/cpu-threads.ts';
import { startDaemon } from '../helpers/daemon-process.ts';

test('/health and the start-up line report the threads in use: the default, or --threads', async () => {
  // The helper sets SVC_THREADS=1 for every test daemon; empty means "not set".
  for (const { env, args, expected } of [
    { env: { SVC_THREADS: '' }, args: [], expected: defaultThreads() },
    // One more than the default: still at most the physical cores, so no slower.
    { env: { SVC_THREADS: '' }, args: ['--threads', String(defaultThreads() + 1)], expected: defaultThreads() + 1 },
  ]) {
    const daemon = await startDaemon({ env, args });
    try {
      const health = (await (await fetch(`${daemon.url}/health`)).json()) as { model: { threads: number } };
      assert.equal(health.model.threads, expected);
      assert.equal(daemon.logs.find((l) => Array.isArray(l['addresses']))?.['threads'], expected);
      // It generates with that setting (the tiny model answers within the test's time either way).
      const res = await fetch(`${daemon.url}/v1/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', prompt: 'hi', max_tokens: 4, temperature: 0 }),
      });
      assert.equal(res.status, 200);
    } finally {
      assert.equal(await daemon.stop(), 0);
    }
  }
});
