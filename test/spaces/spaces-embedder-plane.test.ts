/**
 * Space contents stay on this machine: `--spaces-embedder` naming a model a remote upstream
 * serves stops the daemon at startup (the flag and the reason named) before anything
 * is embedded, while the same scripted server as a local (loopback) upstream is accepted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCliToEnd, startDaemon, waitForHealth } from '../helpers/daemon-process.ts';
import { answer, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';

let upstream: ScriptedUpstream;
let dir: string;
let config: string;

before(async () => {
  upstream = await startScriptedUpstream(answer(200, { object: 'list', model: 'emb', data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8, 0] }], usage: { prompt_tokens: 1, total_tokens: 1 } }));
  dir = mkdtempSync(join(tmpdir(), 'svc-spaces-embedder-'));
  config = join(dir, 'config.toml');
  writeFileSync(config, [
    `[[upstreams]]\nname = "far"\nkind = "remote"\nmodels = ["emb"]\nbase_url = "${upstream.baseUrl}"`,
    `[[upstreams]]\nname = "near"\nmodels = ["emb"]\nbase_url = "${upstream.baseUrl}"`,
  ].join('\n\n'));
});
after(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a remote embedder is refused at startup and receives nothing', async () => {
  const run = await runCliToEnd(['serve', '--port', '0', '--data-dir', join(dir, 'data-far'), '--config', config, '--spaces-embedder', 'far/emb']);
  // What any startup failure of `svc serve` exits with (the message says why).
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /cannot start/);
  assert.match(run.stderr, /--spaces-embedder far\/emb: the model is served by a remote upstream, and space contents stay on this machine/);
  assert.equal(upstream.requests.length, 0, 'nothing reached the remote upstream');
});

test('the same server as a local upstream is accepted as the embedder', async () => {
  const daemon = await startDaemon({ args: ['--config', config, '--spaces-embedder', 'near/emb'] });
  try {
    const health = await waitForHealth<{ retrieval: { embedder: { id: string; dimensions: number; source: string } } }>(daemon.url, () => true);
    assert.deepEqual(health.retrieval.embedder, { id: 'near/emb', dimensions: 3, source: 'model' });
    assert.ok(upstream.requests.some((r) => r.url.endsWith('/embeddings')));
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});
