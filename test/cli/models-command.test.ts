import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { exportDeveloperKeys } from '../../src/accounts/developer-keys/export-developer-keys.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { runCliToEnd, startDaemon, tinyModelPath, waitForHealth } from '../helpers/daemon-process.ts';
import { startMockHub, type MockHub } from '../helpers/mock-hub.ts';
import { buildTinyGguf } from '../helpers/tiny-gguf.ts';
import { freePort } from '../helpers/free-port.ts';
import { devFullUnavailable } from '../helpers/dev-full.ts';

const q4 = buildTinyGguf({ seed: 11 });
const q8 = buildTinyGguf({ seed: 12 });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let hub: MockHub;
let noDaemon: string;
before(async () => {
  hub = await startMockHub({
    repos: [{ owner: 'acme', repo: 'Tiny-GGUF', files: { 'tiny-Q4_K_M.gguf': q4, 'tiny-Q4_K_S.gguf': q8, 'tiny-Q8_0.gguf': q8, 'README.md': Buffer.from('hi') } }],
  });
  hub.addFile('direct.gguf', q8);
  noDaemon = `http://127.0.0.1:${await freePort()}`;
});
after(() => hub.close());
beforeEach(() => {
  Object.assign(hub.faults, { throttleBytesPerSecond: 0, dropAfterBytes: 0, dropTimes: 0, ignoreRange: false, corrupt: false, hideChecksums: false, fileStatus: 0 });
  hub.requests.length = 0;
});

/** A data directory and a home with nothing in it: no test sees the machine's real stores. */
function sandbox(): { dataDir: string; env: Record<string, string> } {
  const root = mkdtempSync(join(tmpdir(), 'svc-models-cli-'));
  const home = join(root, 'home');
  mkdirSync(home);
  return {
    dataDir: join(root, 'data'),
    env: { HOME: home, HF_HOME: join(home, 'hf'), OLLAMA_MODELS: join(home, 'ollama'), HF_ENDPOINT: hub.url, HF_TOKEN: '', SVC_URL: noDaemon, SVC_DISCOVER: 'all' },
  };
}

const run = runCliToEnd;

function files(dir: string): string[] {
  return existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(join(dir, p)).isFile()).sort() : [];
}

function oneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n');
  assert.match(lines.at(-1)!, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

test('pull by file and by quantization tag; --json parses; the id to use is printed', async () => {
  const { dataDir, env } = sandbox();
  const byFile = await run(['models', 'pull', 'hf:acme/Tiny-GGUF/tiny-Q8_0', '--data-dir', dataDir], env);
  assert.equal(byFile.code, 0, byFile.stderr);
  assert.match(byFile.stdout, /hf:acme\/Tiny-GGUF\/tiny-Q8_0 is ready: .*tiny-Q8_0\.gguf\nUse it as "model": "hf:acme\/Tiny-GGUF\/tiny-Q8_0"/);
  assert.match(byFile.stderr, /tiny-Q8_0\.gguf: 589\.1 KiB, sha256 verified/);
  const byTag = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:q4_k_m', '--json'], { ...env, SVC_DATA_DIR: dataDir });
  assert.equal(byTag.code, 0, byTag.stderr);
  const result = JSON.parse(byTag.stdout) as { id: string; path: string; files: { sha256: string; verified: boolean }[] };
  assert.equal(result.id, 'hf:acme/Tiny-GGUF/tiny-Q4_K_M');
  assert.equal(result.files[0]!.sha256, sha(q4));
  assert.equal(result.files[0]!.verified, true);
  assert.deepEqual(files(join(dataDir, 'models')), ['hf/acme/Tiny-GGUF/tiny-Q4_K_M.gguf', 'hf/acme/Tiny-GGUF/tiny-Q8_0.gguf']);
});

test('quantization tag with no match or several: one line listing the candidates, exit 1', async () => {
  const { dataDir, env } = sandbox();
  const none = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q5_K_M', '-d', dataDir], env);
  assert.equal(none.code, 1);
  oneLineError(none.stderr, /^svc models pull: no GGUF in acme\/Tiny-GGUF matches 'Q5_K_M': tiny-Q4_K_M\.gguf, tiny-Q4_K_S\.gguf, tiny-Q8_0\.gguf; /);
  const several = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q4_K', '-d', dataDir], env);
  assert.equal(several.code, 1);
  oneLineError(several.stderr, /'Q4_K' matches 2 GGUF files in acme\/Tiny-GGUF: tiny-Q4_K_M\.gguf, tiny-Q4_K_S\.gguf/);
  assert.deepEqual(files(dataDir), []);
});

test('owner/repo lists the GGUF files with sizes and downloads nothing', async () => {
  const { dataDir, env } = sandbox();
  const listed = await run(['models', 'pull', 'acme/Tiny-GGUF', '-d', dataDir], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^FILE +SIZE +QUANT +PARTS\ntiny-Q4_K_M\.gguf +589\.1 KiB +Q4_K_M/);
  assert.match(listed.stdout, /Pull one with: svc models pull hf:acme\/Tiny-GGUF\/tiny-Q4_K_M\.gguf or svc models pull hf:acme\/Tiny-GGUF:Q4_K_M/);
  const json = await run(['models', 'pull', 'acme/Tiny-GGUF', '--json'], env);
  const listing = JSON.parse(json.stdout) as { models: { path: string; size: number }[] };
  assert.deepEqual(listing.models.map((m) => [m.path, m.size]), [['tiny-Q4_K_M.gguf', q4.length], ['tiny-Q4_K_S.gguf', q8.length], ['tiny-Q8_0.gguf', q8.length]]);
  assert.equal(hub.requests.filter((r) => r.url.includes('/resolve/')).length, 0);
  assert.deepEqual(files(dataDir), []);
});

test('pull by URL lands in models/ with its base name as id', async () => {
  const { dataDir, env } = sandbox();
  const result = await run(['models', 'pull', `${hub.cdnUrl}/files/direct.gguf`, '-d', dataDir, '--json'], env);
  assert.equal(result.code, 0, result.stderr);
  assert.equal((JSON.parse(result.stdout) as { id: string }).id, 'direct');
  assert.deepEqual(readFileSync(join(dataDir, 'models', 'direct.gguf')), q8);
});

test('errors are one line and a non-zero exit: 404 repository and file, bad reference, hub down, checksum mismatch', async () => {
  const { dataDir, env } = sandbox();
  const repo = await run(['models', 'pull', 'hf:acme/missing:Q4_K_M', '-d', dataDir], env);
  assert.equal(repo.code, 1);
  oneLineError(repo.stderr, /^svc models pull: repository acme\/missing not found on http:\/\/127\.0\.0\.1:\d+ \(a private or gated repository needs HF_TOKEN\)$/);
  const file = await run(['models', 'pull', 'hf:acme/Tiny-GGUF/nope.gguf', '-d', dataDir], env);
  assert.equal(file.code, 1);
  oneLineError(file.stderr, /^svc models pull: nope\.gguf not found in acme\/Tiny-GGUF; its GGUF files: tiny-Q4_K_M\.gguf/);
  const bad = await run(['models', 'pull', 'hf:acme', '-d', dataDir], env);
  assert.equal(bad.code, 2);
  oneLineError(bad.stderr, /^svc models pull: 'hf:acme' does not name a hub repository/);
  const down = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q8_0', '-d', dataDir], { ...env, HF_ENDPOINT: noDaemon });
  assert.equal(down.code, 1);
  oneLineError(down.stderr, /^svc models pull: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED$/);
  hub.faults.corrupt = true;
  const corrupt = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q8_0', '-d', dataDir], env);
  assert.equal(corrupt.code, 1);
  oneLineError(corrupt.stderr, /^svc models pull: tiny-Q8_0\.gguf: sha256 mismatch \(expected [0-9a-f]{64}, got [0-9a-f]{64}\); the partial download was deleted/);
  assert.deepEqual(files(dataDir).filter((f) => !f.startsWith('cache/')), []);
});

test('disk full (the .partial links to /dev/full): one line, exit 1, no model file', { skip: devFullUnavailable() }, async () => {
  const { dataDir, env } = sandbox();
  const dir = join(dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  mkdirSync(dir, { recursive: true });
  symlinkSync('/dev/full', join(dir, 'tiny-Q8_0.gguf.partial'));
  const result = await run(['models', 'pull', 'hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', '-d', dataDir], env);
  assert.equal(result.code, 1);
  oneLineError(result.stderr, /^svc models pull: disk full while writing .*tiny-Q8_0\.gguf\.partial; free some space and run the command again to resume$/);
  assert.equal(existsSync(join(dir, 'tiny-Q8_0.gguf')), false);
});

test('Ctrl-C mid-download: exit 130, only the .partial is left; the next run resumes with Range', async () => {
  const { dataDir, env } = sandbox();
  const dir = join(dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  const partial = join(dir, 'tiny-Q4_K_M.gguf.partial');
  hub.faults.throttleBytesPerSecond = 100_000;
  const interrupted = await run(['models', 'pull', 'hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', '-d', dataDir], env, (child) => {
    const poll = setInterval(() => {
      if (existsSync(partial) && statSync(partial).size > 50_000) {
        clearInterval(poll);
        child.kill('SIGINT');
      }
    }, 20);
    child.once('exit', () => clearInterval(poll));
  });
  assert.equal(interrupted.code, 130, interrupted.stderr);
  oneLineError(interrupted.stderr, /^svc models pull: interrupted; [\d.]+ (?:MiB|GiB) kept in tiny-Q4_K_M\.gguf\.partial, run the same command to resume$/);
  assert.deepEqual(files(dir), ['tiny-Q4_K_M.gguf.partial', 'tiny-Q4_K_M.gguf.partial.json']);
  const kept = statSync(partial).size;
  hub.faults.throttleBytesPerSecond = 0;
  hub.requests.length = 0;
  const resumed = await run(['models', 'pull', 'hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', '-d', dataDir, '--json'], env);
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout) as { files: { sha256: string; resumed_from: number }[] };
  assert.equal(result.files[0]!.resumed_from, kept);
  assert.equal(result.files[0]!.sha256, sha(q4));
  assert.deepEqual(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.headers.range), [`bytes=${kept}-`]);
  assert.deepEqual(files(dir), ['tiny-Q4_K_M.gguf']);
});

/** A tiny model in each foreign store layout: the Hugging Face cache and Ollama's store. */
function foreignStores(env: Record<string, string>): void {
  const snapshot = join(env.HF_HOME!, 'hub', 'models--acme--cached', 'snapshots', 'abc123');
  mkdirSync(snapshot, { recursive: true });
  mkdirSync(join(env.HF_HOME!, 'hub', 'models--acme--cached', 'refs'), { recursive: true });
  writeFileSync(join(env.HF_HOME!, 'hub', 'models--acme--cached', 'refs', 'main'), 'abc123');
  copyFileSync(tinyModelPath(), join(snapshot, 'cached-model.gguf'));
  const blob = readFileSync(tinyModelPath());
  const digest = sha(blob);
  mkdirSync(join(env.OLLAMA_MODELS!, 'blobs'), { recursive: true });
  writeFileSync(join(env.OLLAMA_MODELS!, 'blobs', `sha256-${digest}`), blob);
  const manifest = join(env.OLLAMA_MODELS!, 'manifests', 'registry.ollama.ai', 'library', 'tinyllama', 'latest');
  mkdirSync(join(manifest, '..'), { recursive: true });
  writeFileSync(manifest, JSON.stringify({ schemaVersion: 2, layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: blob.length }] }));
}

test('list, ps and info with no daemon: one line says so, the disk is read (other tools\' stores too)', async () => {
  const { dataDir, env } = sandbox();
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  copyFileSync(tinyModelPath(), join(dataDir, 'models', 'mine.gguf'));
  foreignStores(env);
  const list = await run(['models', 'list', '-d', dataDir, '--json'], env);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stderr, `no svc daemon at ${noDaemon}; listing the models on disk\n`);
  const models = JSON.parse(list.stdout) as { id: string; source: string; arch: string; size_bytes: number; state: string | null }[];
  assert.deepEqual(models.map((m) => [m.id, m.source]), [['mine', 'svc'], ['tinyllama:latest', 'ollama'], ['hf:acme/cached/cached-model', 'huggingface']]);
  assert.ok(models.every((m) => m.arch === 'llama' && m.size_bytes > 0 && m.state === null));
  const table = await run(['models', '-d', dataDir], env);
  assert.match(table.stdout, /^ID +SIZE +PARAMS +QUANT +CONTEXT +SOURCE\nmine /);
  const ps = await run(['models', 'ps', '--json'], env);
  assert.equal(ps.code, 0);
  assert.deepEqual(JSON.parse(ps.stdout), []);
  assert.match(ps.stderr, /no svc daemon at .*; no models are loaded/);
  const info = await run(['models', 'info', 'tinyllama:latest', '-d', dataDir], env);
  assert.equal(info.code, 0, info.stderr);
  for (const line of [/^architecture +llama$/m, /^quantization +F32$/m, /^context length +4096$/m, /^source +ollama$/m, /^capabilities +chat$/m, /^path +.*sha256-[0-9a-f]{64}$/m]) assert.match(info.stdout, line);
  const missing = await run(['models', 'info', 'nope', '-d', dataDir], env);
  assert.equal(missing.code, 1);
  oneLineError(missing.stderr, /^svc models info: no model 'nope'; svc models list shows the ids$/);
  const badFlag = await run(['models', 'list', '--model', '/nonexistent/x.gguf', '-d', dataDir], env);
  assert.equal(badFlag.code, 1);
  oneLineError(badFlag.stderr, /^svc models list: Model file not found: \/nonexistent\/x\.gguf$/);
  const noServer = await run(['models', 'load', 'tiny'], env);
  assert.equal(noServer.code, 1);
  oneLineError(noServer.stderr, /^svc models load: no svc daemon at http:\/\/127\.0\.0\.1:\d+; start one with svc serve$/);
  const typo = await run(['models', 'pul', 'x'], env);
  assert.equal(typo.code, 2);
  oneLineError(typo.stderr, /^svc models: unknown command 'pul'/);
});

test('list, ps and info ask a running daemon', async () => {
  const { env } = sandbox();
  const daemon = await startDaemon({ args: ['--keep-alive', 'forever'] });
  try {
    const withUrl = { ...env, SVC_URL: daemon.url };
    const list = await run(['models', 'list', '--json'], withUrl);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stderr, '');
    assert.deepEqual((JSON.parse(list.stdout) as { id: string; state: string }[]).map((m) => [m.id, m.state]), [['tiny', 'not-loaded'], ['svc-hashed-embed-v2', 'loaded']]);
    assert.deepEqual(JSON.parse((await run(['models', 'ps', '--json'], withUrl)).stdout), []);
    const chat = await fetch(`${daemon.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
    assert.equal(chat.status, 200);
    await waitForHealth(daemon.url, (h) => h.model.loaded.includes('tiny'));
    const ps = await run(['models', 'ps'], withUrl);
    assert.match(ps.stdout, /^ID +SIZE .*\ntiny /);
    const info = await run(['models', 'info', 'tiny', '--json', '--url', daemon.url], env);
    assert.equal(info.code, 0, info.stderr);
    const view = JSON.parse(info.stdout) as Record<string, unknown>;
    assert.deepEqual(
      { id: view.id, state: view.state, source: view.source, arch: view.arch, quantization: view.quantization, max_context_length: view.max_context_length, capabilities: view.capabilities },
      { id: 'tiny', state: 'loaded', source: 'flag', arch: 'llama', quantization: 'F32', max_context_length: 4096, capabilities: ['chat'] },
    );
    const text = await run(['models', 'info', 'tiny', '--url', daemon.url], env);
    assert.match(text.stdout, /^state +loaded$/m);
    assert.match(text.stdout, /^path +.*tiny-v1\.gguf$/m);
    // load and unload ask the daemon (POST /api/models/load|unload).
    const unload = await run(['models', 'unload', 'tiny'], withUrl);
    assert.equal(unload.code, 0, unload.stderr);
    assert.equal(unload.stdout, 'tiny: not-loaded\n');
    assert.deepEqual(JSON.parse((await run(['models', 'ps', '--json'], withUrl)).stdout), []);
    const load = await run(['models', 'load', 'tiny', '--json'], withUrl);
    assert.equal((JSON.parse(load.stdout) as { state: string }).state, 'loaded');
    assert.equal((JSON.parse((await run(['models', 'ps', '--json'], withUrl)).stdout) as { id: string }[])[0]?.id, 'tiny');
    const unknown = await run(['models', 'load', 'nope'], withUrl);
    assert.equal(unknown.code, 1);
    oneLineError(unknown.stderr, /^svc models load: The model "nope" does not exist\. Available models: tiny, /);
    // --disk reads the disk even with a daemon up.
    const disk = await run(['models', 'list', '--disk', '--json', '-d', mkdtempSync(join(tmpdir(), 'svc-empty-'))], withUrl);
    assert.deepEqual(JSON.parse(disk.stdout), []);
  } finally {
    await daemon.stop();
  }
});

test('list, ps, info, load and unload send SVC_API_KEY to a daemon that requires a developer key', async () => {
  const { env } = sandbox();
  const dir = mkdtempSync(join(tmpdir(), 'svc-models-devkey-'));
  const store = await openHostedStore({ dataDir: join(dir, 'hosted') });
  const account = await store.createAccount({ name: 'Developer', plan: { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'developer_runtime', name: 'cli', project: null });
  const keyFile = join(dir, 'developer-keys.json');
  writeFileSync(keyFile, JSON.stringify(await exportDeveloperKeys(store, account.id)));
  await store.close();
  const daemon = await startDaemon({ args: ['--keep-alive', 'forever', '--developer-keys', keyFile, '--require-developer-key'] });
  try {
    const keyed = { ...env, SVC_URL: daemon.url, SVC_API_KEY: secret };
    const list = await run(['models', 'list', '--json'], keyed);
    assert.equal(list.code, 0, list.stderr);
    assert.ok((JSON.parse(list.stdout) as { id: string }[]).some((m) => m.id === 'tiny'));
    const load = await run(['models', 'load', 'tiny', '--json'], keyed);
    assert.equal(load.code, 0, load.stderr);
    assert.equal((JSON.parse(load.stdout) as { state: string }).state, 'loaded');
    assert.deepEqual((JSON.parse((await run(['models', 'ps', '--json'], keyed)).stdout) as { id: string }[]).map((m) => m.id), ['tiny']);
    assert.match((await run(['models', 'info', 'tiny'], keyed)).stdout, /^state +loaded$/m);
    assert.equal((await run(['models', 'unload', 'tiny'], keyed)).stdout, 'tiny: not-loaded\n');
    // Without the key the daemon refuses, and the one line says what to set.
    const bare = { ...env, SVC_URL: daemon.url, SVC_API_KEY: '' };
    for (const args of [['models', 'list'], ['models', 'load', 'tiny']]) {
      const refused = await run(args, bare);
      assert.equal(refused.code, 1, args.join(' '));
      oneLineError(refused.stderr, /401|developer key.*SVC_API_KEY|SVC_API_KEY/);
    }
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('list through a daemon shows what its discovery skipped, one warning a line', async () => {
  const { env } = sandbox();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-warn-'));
  mkdirSync(join(dataDir, 'models'));
  writeFileSync(join(dataDir, 'models', 'notes.gguf'), 'not a model');
  const daemon = await startDaemon({ args: ['--data-dir', dataDir] });
  try {
    const list = await run(['models', 'list', '--json', '--url', daemon.url], env);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual((JSON.parse(list.stdout) as { id: string }[]).map((m) => m.id), ['tiny', 'svc-hashed-embed-v2']);
    const warnings = list.stderr.trim().split('\n');
    assert.equal(warnings.length, 1, list.stderr);
    assert.match(warnings[0]!, /^warning: .*notes\.gguf/);
  } finally {
    await daemon.stop();
  }
});

test('rm deletes from svc\'s folder only: asks for --yes off a terminal, refuses other tools\' models and links out of the folder', async () => {
  const { dataDir, env } = sandbox();
  foreignStores(env);
  const pulled = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q8_0', '-d', dataDir], env);
  assert.equal(pulled.code, 0, pulled.stderr);
  const unconfirmed = await run(['models', 'rm', 'hf:acme/Tiny-GGUF/tiny-Q8_0', '-d', dataDir], env);
  assert.equal(unconfirmed.code, 1);
  oneLineError(unconfirmed.stderr, /pass --yes/);
  const removed = await run(['models', 'rm', 'hf:acme/Tiny-GGUF/tiny-Q8_0', '-d', dataDir, '--yes', '--json'], env);
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual((JSON.parse(removed.stdout) as { removed: string[] }).removed, [join(dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF', 'tiny-Q8_0.gguf')]);
  assert.deepEqual(readdirSync(join(dataDir, 'models')), [], 'the emptied hf/acme/Tiny-GGUF folders are gone');

  const ollama = await run(['models', 'rm', 'tinyllama:latest', '-d', dataDir, '--yes'], env);
  assert.equal(ollama.code, 1);
  oneLineError(ollama.stderr, /^svc models rm: tinyllama:latest belongs to Ollama; svc leaves it alone\. Remove it with: ollama rm tinyllama:latest$/);
  const hf = await run(['models', 'rm', 'hf:acme/cached/cached-model', '-d', dataDir, '--yes'], env);
  assert.equal(hf.code, 1);
  oneLineError(hf.stderr, /^svc models rm: hf:acme\/cached\/cached-model is in the Hugging Face cache; svc leaves it alone\. Remove it with: huggingface-cli delete-cache$/);
  assert.equal(files(env.OLLAMA_MODELS!).length, 2);

  const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
  copyFileSync(tinyModelPath(), join(outside, 'precious.gguf'));
  symlinkSync(join(outside, 'precious.gguf'), join(dataDir, 'models', 'linked.gguf'));
  const linked = await run(['models', 'rm', 'linked', '-d', dataDir, '--yes'], env);
  assert.equal(linked.code, 1);
  oneLineError(linked.stderr, /^svc models rm: refusing to delete linked: .*linked\.gguf leads to .*precious\.gguf, outside svc's models folder/);
  assert.ok(existsSync(join(outside, 'precious.gguf')));
  assert.ok(existsSync(join(dataDir, 'models', 'linked.gguf')));
  const unknown = await run(['models', 'rm', 'nope', '-d', dataDir, '--yes'], env);
  assert.equal(unknown.code, 1);
  oneLineError(unknown.stderr, /no model 'nope' on disk/);
});

test('a pulled model is served by the next daemon under the printed id (and a running one says to restart)', async () => {
  const { dataDir, env } = sandbox();
  mkdirSync(dataDir, { recursive: true });
  const before = await startDaemon({ withModel: false, args: ['--data-dir', dataDir] });
  let id: string;
  try {
    const pulled = await run(['models', 'pull', 'hf:acme/Tiny-GGUF:Q8_0', '--json'], { ...env, SVC_DATA_DIR: dataDir, SVC_URL: before.url });
    assert.equal(pulled.code, 0, pulled.stderr);
    id = (JSON.parse(pulled.stdout) as { id: string }).id;
    assert.match(pulled.stderr, new RegExp(`the daemon at ${before.url} does not list hf:acme/Tiny-GGUF/tiny-Q8_0 yet; restart it to serve the new model`));
  } finally {
    await before.stop();
  }
  const daemon = await startDaemon({ withModel: false, args: ['--data-dir', dataDir] });
  try {
    const model = await (await fetch(`${daemon.url}/v1/models/${encodeURIComponent(id)}`)).json() as { id: string; source: string };
    assert.deepEqual([model.id, model.source], [id, 'svc']);
    const chat = await fetch(`${daemon.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: id, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
    assert.equal(chat.status, 200, await chat.clone().text());
    assert.equal(((await chat.json()) as { model: string }).model, id);
  } finally {
    await daemon.stop();
  }
});
