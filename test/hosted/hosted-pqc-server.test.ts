/**
 * `svc hosted --pqc-transport ml-kem-768,ml-dsa-65` as a process: HTTPS with the ML-DSA
 * certificate, the official openai client over it, and the svc_route it answers verified offline
 * by `svc evidence verify` against the identity the server publishes.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { runCliToEnd, startServerProcess, tinyModelPath } from '../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../helpers/hosted-stores.ts';

test('svc hosted over PQC TLS: a chat through the openai client, its svc_route signed and verified offline with the published identity', { timeout: 120_000 }, async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'pqc');

  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', tinyModelPath(), '--pqc-transport', 'ml-kem-768,ml-dsa-65']);
  t.after(() => hosted.stop());
  assert.match(hosted.url, /^https:\/\/127\.0\.0\.1:\d+$/);

  // Trust exactly the certificate the server made in its data dir.
  const ca = readFileSync(join(dataDir, 'transport', 'identity-ml-dsa-65.crt'), 'utf8');
  const dispatcher = new Agent({ connect: { ca } });
  t.after(() => dispatcher.close());
  const identity = await undiciFetch(`${hosted.url}/transport/identity`, { dispatcher }).then((r) => r.json()) as { public_key: string; key_id: string };

  const client = new OpenAI({ baseURL: `${hosted.url}/api/v1`, apiKey: secret, maxRetries: 0, fetch: undiciFetch as unknown as typeof fetch, fetchOptions: { dispatcher } as never });
  const completion = await client.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 });
  const route = (completion as unknown as { svc_route: Record<string, unknown> }).svc_route;
  assert.equal(route.signature_alg, 'ml-dsa-65');
  assert.equal(route.signing_key_id, identity.key_id);

  const saved = join(dataDir, 'answer.json');
  const key = join(dataDir, 'identity.json');
  writeFileSync(saved, JSON.stringify(completion));
  writeFileSync(key, JSON.stringify(identity));
  const verified = await runCliToEnd(['evidence', 'verify', saved, '--public-key', key]);
  assert.equal(verified.code, 0, verified.stderr);
  assert.match(verified.stdout, new RegExp(`^valid    ${String(route.evidence_id)}: signed by ml-dsa-65 key ${identity.key_id}\\n$`));
  const line = hosted.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('HTTPS only'));
  assert.ok(line, 'the start-up log says what the transport is');
});
