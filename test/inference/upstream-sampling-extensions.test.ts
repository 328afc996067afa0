/**
 * llama.cpp's and Ollama's sampling fields reach an upstream under their own names, typical_p
 * and mirostat included (the upstream may have the samplers the local engine lacks).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OpenAIUpstream } from '../../src/inference/openai-upstream.ts';
import { contentChunk, finishChunk, sse, startUpstreamClient, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';

let server: ScriptedUpstream;
let upstream: OpenAIUpstream;
before(async () => {
  ({ server, upstream } = await startUpstreamClient());
});
after(async () => {
  await upstream.close();
  await server.close();
});

const extensions = { topK: 5, minP: 0.1, repeatPenalty: 1.3, repeatLastN: -1, typicalP: 0.5, mirostat: 2, mirostatTau: 4, mirostatEta: 0.2 };
const wire = { top_k: 5, min_p: 0.1, repeat_penalty: 1.3, repeat_last_n: -1, typical_p: 0.5, mirostat: 2, mirostat_tau: 4, mirostat_eta: 0.2 };

test('chat and completions send them as llama-server and Ollama name them', async () => {
  server.handle(sse([contentChunk('a'), finishChunk('stop'), 'data: [DONE]']));
  await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], { temperature: 0.5, ...extensions });
  assert.deepEqual({ ...server.requests.at(-1)!.body as object }, {
    model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5, ...wire, stream: true, stream_options: { include_usage: true },
  });

  server.handle(sse([{ id: 'c', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'a', finish_reason: 'stop' }] }, 'data: [DONE]']));
  await upstream.model('m', 'up/m').complete('once', { ...extensions });
  const body = server.requests.at(-1)!.body as Record<string, unknown>;
  for (const [key, value] of Object.entries(wire)) assert.equal(body[key], value, key);
});

test('fields the client did not send are not sent', async () => {
  server.handle(sse([contentChunk('a'), finishChunk('stop'), 'data: [DONE]']));
  await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], {});
  const body = server.requests.at(-1)!.body as Record<string, unknown>;
  for (const key of Object.keys(wire)) assert.equal(Object.hasOwn(body, key), false, key);
});
