/**
 * What svc writes under `<data-dir>/models` and `<data-dir>/cache` is the user's alone, under
 * the most permissive umask: folders 0700, the partial download and its notes, the model it
 * becomes and the header index cache 0600; a partial an older svc left 0644 comes out 0600.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { discoverModels } from '../../src/models/model-discovery.ts';
import { pullModel, type PullOptions } from '../../src/models/model-pull.ts';
import { parseModelReference } from '../../src/models/model-reference.ts';
import { PullError } from '../../src/models/pull-error.ts';
import { startMockHub, type MockHub } from '../helpers/mock-hub.ts';
import { entriesNotPrivate, fileCount } from '../helpers/private-modes.ts';
import { buildTinyGguf } from '../helpers/tiny-gguf.ts';

let hub: MockHub;
let previousUmask = 0;
before(async () => {
  hub = await startMockHub({ repos: [{ owner: 'acme', repo: 'Tiny-GGUF', files: { 'tiny-Q4_K_M.gguf': buildTinyGguf({ seed: 1 }) } }] });
  // Anything svc does not set itself comes out readable (and writable) by everyone.
  previousUmask = process.umask(0o000);
});
after(async () => {
  process.umask(previousUmask);
  await hub.close();
});

function dataDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-model-modes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function pull(options: PullOptions): Promise<void> {
  const ref = parseModelReference('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', { hubEndpoint: hub.url });
  assert.notEqual(ref.kind, 'hub-repo');
  await pullModel(ref as Exclude<typeof ref, { kind: 'hub-repo' }>, options);
}

async function interruptedPull(dir: string): Promise<void> {
  Object.assign(hub.faults, { dropAfterBytes: 100_000, dropTimes: 1 });
  try {
    await assert.rejects(pull({ dataDir: dir, hubEndpoint: hub.url, retries: 0, retryDelayMs: 1 }), (error) => error instanceof PullError && error.code === 'network');
  } finally {
    Object.assign(hub.faults, { dropAfterBytes: 0, dropTimes: 0 });
  }
}

test('a pull, cut off and then finished, and the model listing write only 0600 files in 0700 folders under umask 000', async (t) => {
  const dir = dataDir(t);
  await interruptedPull(dir);
  assert.equal(fileCount(dir), 2, 'the .partial and its .partial.json are kept');
  assert.deepEqual(entriesNotPrivate(dir), []);

  await pull({ dataDir: dir, hubEndpoint: hub.url, retryDelayMs: 1 });
  const listed = await discoverModels({ dataDir: dir, sources: new Set() });
  assert.deepEqual(listed.models.map((m) => m.id), ['hf:acme/Tiny-GGUF/tiny-Q4_K_M']);
  assert.equal(statSync(join(dir, 'cache', 'gguf-index.json')).isFile(), true);
  assert.deepEqual(entriesNotPrivate(dir), []);
});

test('a partial an older svc left readable by others is resumed into a 0600 model', async (t) => {
  const dir = dataDir(t);
  await interruptedPull(dir);
  const folder = join(dir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  for (const file of ['tiny-Q4_K_M.gguf.partial', 'tiny-Q4_K_M.gguf.partial.json']) chmodSync(join(folder, file), 0o644);
  chmodSync(folder, 0o755);
  await pull({ dataDir: dir, hubEndpoint: hub.url, retryDelayMs: 1 });
  assert.equal(statSync(join(folder, 'tiny-Q4_K_M.gguf')).mode & 0o777, 0o600);
  assert.equal(statSync(folder).mode & 0o777, 0o700);
});
