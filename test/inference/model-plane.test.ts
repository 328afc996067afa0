/**
 * The one rule for "remote": a model served by an upstream of kind `remote`, read the same way
 * from the listing (`/v1/models`) and from the model the chat route resolves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MergedModelRegistry } from '../../src/inference/merged-model-registry.ts';
import { isRemoteModel } from '../../src/inference/model-plane.ts';
import { UpstreamRegistry } from '../../src/inference/upstream-registry.ts';
import { EmbedderModelRegistry } from '../../src/spaces/embedder-model-registry.ts';
import { HashedEmbedder } from '../../src/spaces/hashed-embedder.ts';

test('remote-kind upstream models are remote, in the list and as models; everything else is local', async () => {
  const log = { info: () => {}, warn: () => {}, debug: () => {} };
  const spec = { connectTimeoutMs: 1000, firstByteTimeoutMs: 1000, discover: false } as const;
  const upstreams = new UpstreamRegistry([
    { ...spec, name: 'far', baseUrl: 'http://127.0.0.1:9/v1', kind: 'remote', models: ['big'] },
    { ...spec, name: 'near', baseUrl: 'http://127.0.0.1:9/v1', kind: 'local', models: ['small'] },
  ], { log });
  const registry = new MergedModelRegistry([upstreams, new EmbedderModelRegistry(new HashedEmbedder())]);
  try {
    const planes = new Map(registry.list().map((m) => [m.id, isRemoteModel(m)]));
    assert.deepEqual([...planes], [['far/big', true], ['near/small', false], ['svc-hashed-embed-v2', false]]);
    for (const [id, remote] of planes) assert.equal(isRemoteModel(registry.model(id)!), remote, id);
  } finally {
    await upstreams.close();
  }
});
