import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { formatDuration, PullProgress } from '../../src/cli/pull-progress.ts';
import type { PlannedFile } from '../../src/models/model-pull.ts';

const file: PlannedFile = { name: 'tiny-Q4_K_M.gguf', url: 'http://x/tiny', dest: '/tmp/x/tiny-Q4_K_M.gguf', size: 4 * 1024 * 1024, sha256: undefined };

function sink(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & { isTTY: boolean; columns: number };
  stream.isTTY = tty;
  stream.columns = 160;
  let text = '';
  (stream as unknown as PassThrough).on('data', (d: Buffer) => { text += d.toString(); });
  return { stream, text: () => text };
}

async function feed(progress: PullProgress): Promise<void> {
  progress.onEvent({ type: 'resolved', id: 'hf:acme/tiny/tiny-Q4_K_M', source: 'https://hub/acme/tiny (abc)', files: [file] });
  progress.onEvent({ type: 'file-start', file, index: 0, count: 1 });
  for (let mib = 1; mib <= 4; mib++) {
    progress.onEvent({ type: 'download', file, progress: { phase: 'downloading', bytes: mib * 1024 * 1024, total: file.size, resumedFrom: 0 } });
    await new Promise((r) => setTimeout(r, 150));
  }
  progress.onEvent({ type: 'download', file, progress: { phase: 'verifying', bytes: file.size! } });
  progress.onEvent({ type: 'file-done', file, result: { path: file.dest, bytes: file.size!, sha256: 'ab'.repeat(32), verified: true, resumedFrom: 1024 * 1024 } });
  progress.close();
  await new Promise((r) => setImmediate(r));
}

test('on a terminal: a bar with bytes, rate and ETA, then the verification line', async () => {
  const out = sink(true);
  await feed(new PullProgress({ stream: out.stream, tty: true }));
  const text = out.text();
  assert.match(text, /pulling hf:acme\/tiny\/tiny-Q4_K_M from https:\/\/hub\/acme\/tiny \(abc\) \(4\.0 MiB\)\n/);
  assert.match(text, /tiny-Q4_K_M\.gguf \|[█░]+\| 25% \| 1\.0 MiB \/ 4\.0 MiB \| - \| ETA \?/);
  assert.match(text, /\| 3\.0 MiB \/ 4\.0 MiB \| [\d.]+ MiB\/s \| ETA \d+s/);
  assert.match(text, /tiny-Q4_K_M\.gguf: 4\.0 MiB, sha256 verified, resumed at 1\.0 MiB\n/);
});

test('off a terminal: plain lines at the interval, no control sequences', async () => {
  const out = sink(false);
  await feed(new PullProgress({ stream: out.stream, tty: false, intervalMs: 100 }));
  const text = out.text();
  assert.doesNotMatch(text, /\x1b/);
  assert.match(text, /^tiny-Q4_K_M\.gguf: [234]\.0 MiB \/ 4\.0 MiB \(\d+%\), ([\d.]+ MiB\/s|-), ETA (\d+s|\?)$/m);
  assert.match(text, /tiny-Q4_K_M\.gguf: 4\.0 MiB, sha256 verified/);
});

test('durations read like 45s, 3m07s, 2h05m', () => {
  assert.equal(formatDuration(45.2), '45s');
  assert.equal(formatDuration(187), '3m07s');
  assert.equal(formatDuration(7500), '2h05m');
  assert.equal(formatDuration(Infinity), '?');
});
