/**
 * Embeddings are L2-normalized, as OpenAI, Ollama and llama.cpp's server return them (llama.cpp's
 * pooled vector has a norm of about 8 on the fixture), for float and base64 answers alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type OpenAI from 'openai';
import { l2Normalize } from '../../src/inference/l2-normalize.ts';
import { startDaemonWithClient, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
let client: OpenAI;
before(async () => {
  ({ daemon, client } = await startDaemonWithClient());
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

const norm = (v: readonly number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

test('float vectors have unit length, for text and token inputs', async () => {
  const res = await fetch(`${daemon.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', input: ['hello world', 'the quantum model', 'a'], encoding_format: 'float' }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: { embedding: number[] }[] };
  assert.equal(body.data.length, 3);
  // float32 components: unit length to float32 precision.
  for (const { embedding } of body.data) assert.ok(Math.abs(norm(embedding) - 1) < 1e-6, `norm ${norm(embedding)}`);

  const tokens = (await (await fetch(`${daemon.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', input: [[1, 300, 301], [5]], encoding_format: 'float' }),
  })).json()) as { data: { embedding: number[] }[] };
  for (const { embedding } of tokens.data) assert.ok(Math.abs(norm(embedding) - 1) < 1e-6, `norm ${norm(embedding)}`);
});

test('base64 (float32, what the openai client asks for) has unit length to float32 precision', async () => {
  const reply = await client.embeddings.create({ model: 'tiny', input: ['hello world', 'the quantum model'] });
  for (const { embedding } of reply.data) assert.ok(Math.abs(norm(embedding) - 1) < 1e-5, `norm ${norm(embedding)}`);
  // The same direction as the float answer: normalizing changed the length only.
  // The float answer carries the very same float32 numbers.
  const floats = await client.embeddings.create({ model: 'tiny', input: 'hello world', encoding_format: 'float' });
  assert.deepEqual(floats.data[0]!.embedding, reply.data[0]!.embedding);
});

test('l2Normalize scales to unit length in float32 and keeps a zero vector zero', () => {
  assert.deepEqual(l2Normalize([3, 4]), [Math.fround(0.6), Math.fround(0.8)]);
  assert.deepEqual(l2Normalize(new Float32Array([0, 0, 0])), [0, 0, 0]);
  assert.ok(Math.abs(norm(l2Normalize([1e-20, 2e-20, -3e-20])) - 1) < 1e-6);
});
