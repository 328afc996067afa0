import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliToEnd, tinyModelPath } from '../helpers/daemon-process.ts';

const run = runCliToEnd;

test('svc --help and svc serve --help describe the commands and flags', async () => {
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /serve/);
  assert.match(help.stdout, /models/);
  const serve = await run(['serve', '--help']);
  assert.equal(serve.code, 0);
  for (const flag of ['--port', '--data-dir', '--model', '--log-level', '--keep-alive', '--parallel', 'SVC_PORT']) assert.match(serve.stdout, new RegExp(flag));
});

test('svc models list shows GGUF files from the data directory and --model', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  mkdirSync(join(dataDir, 'models'));
  copyFileSync(tinyModelPath(), join(dataDir, 'models', 'from-dir.gguf'));
  const listed = await run(['models', 'list', '--data-dir', dataDir, '--model', `named=${tinyModelPath()}`, '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const models = JSON.parse(listed.stdout) as { id: string; size_bytes: number }[];
  assert.deepEqual(models.map((m) => m.id), ['named', 'from-dir']);
  assert.ok(models.every((m) => m.size_bytes > 0));
  const empty = await run(['models', 'list'], { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')) });
  assert.match(empty.stdout, /No models/);
});

test('svc serve with a missing model file exits non-zero with the path', async () => {
  const result = await run(['serve', '--port', '0', '--model', '/nonexistent/missing.gguf', '--data-dir', mkdtempSync(join(tmpdir(), 'svc-cli-'))]);
  assert.notEqual(result.code, 0);
  assert.match(result.stdout + result.stderr, /missing\.gguf/);
});
