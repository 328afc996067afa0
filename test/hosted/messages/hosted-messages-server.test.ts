/**
 * `svc hosted` as a process with the tiny GGUF on its engine backend, driven by the official
 * `@anthropic-ai/sdk`: create, stream, forced tool use with a tool_result round trip and
 * count_tokens, each generation with its ledger row and evidence, the count with none, and the
 * usage report counting them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { SvcRoute } from '../../../src/accounts/svc-route.ts';
import { startServerProcess, tinyModelPath } from '../../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../../helpers/hosted-stores.ts';

type WithRoute = { svc_route: SvcRoute; svc_outcome: string };

test('svc hosted with --model: the Anthropic SDK creates, streams, uses a tool and counts tokens on the engine; every generation billed with evidence, the count not', { timeout: 180_000 }, async (t) => {
  const { dataDir, store, accountId, secret } = await prepareHostedDataDir(t, 'messages');
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', tinyModelPath(), '--log-level', 'info']);
  t.after(() => hosted.stop());
  const client = new Anthropic({ apiKey: secret, baseURL: `${hosted.url}/api`, maxRetries: 0 });
  const month = async () => (await store.allowance(accountId)).month;

  const message = await client.messages.create({ model: 'svc-chat', max_tokens: 8, system: 'Be brief.', messages: [{ role: 'user', content: 'hello' }] }, { headers: { 'x-svc-project-id': 'p1' } }) as Anthropic.Message & WithRoute;
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, 'svc-chat');
  assert.equal(message.usage.output_tokens, 8);
  assert.equal(message.stop_reason, 'max_tokens');
  assert.ok(message.usage.input_tokens > 0);
  assert.equal(message.svc_route.provider, 'svc-llama.cpp');
  assert.equal(message.svc_route.execution_plane, 'supercomputer');
  assert.ok(message.svc_route.estimated_joules > 0);
  const row = await store.findEvidence(accountId, message.svc_route.evidence_id);
  assert.equal(row?.completionTokens, 8);
  assert.equal(row?.projectId, 'p1');
  assert.deepEqual(row?.route, message.svc_route);

  const events: string[] = [];
  const stream = client.messages.stream({ model: 'svc-chat', max_tokens: 6, messages: [{ role: 'user', content: 'hello again' }] });
  stream.on('streamEvent', (event) => events.push(event.type));
  const streamed = await stream.finalMessage();
  assert.equal(events[0], 'message_start');
  assert.equal(events.at(-1), 'message_stop');
  assert.ok(events.includes('content_block_delta'));
  assert.equal(streamed.usage.output_tokens, 6);
  assert.ok(streamed.content.length > 0);

  // A forced tool: grammar makes the tiny model's call an object of the schema.
  const tools = [{ name: 'lookup', description: 'Look a word up', input_schema: { type: 'object' as const, properties: { word: { type: 'string', maxLength: 5 } }, required: ['word'], additionalProperties: false } }];
  const call = await client.messages.create({ model: 'svc-chat', max_tokens: 64, tools, tool_choice: { type: 'tool', name: 'lookup' }, messages: [{ role: 'user', content: 'look up cat' }] }) as Anthropic.Message & WithRoute;
  const use = call.content.find((b) => b.type === 'tool_use');
  assert.ok(use !== undefined && use.type === 'tool_use', JSON.stringify(call.content));
  assert.equal(use.name, 'lookup');
  assert.equal(typeof (use.input as { word?: unknown }).word, 'string');
  assert.equal(call.stop_reason, 'tool_use');
  const answered = await client.messages.create({
    model: 'svc-chat', max_tokens: 4, tools,
    messages: [{ role: 'user', content: 'look up cat' }, { role: 'assistant', content: call.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'a small animal' }] }],
  }) as Anthropic.Message & WithRoute;
  assert.equal(answered.svc_outcome, 'completed');

  // count_tokens: the engine's own count (template and system prompt included), nothing billed.
  const before = await store.ledgerTotal(accountId, await month());
  const counted = await client.messages.countTokens({ model: 'svc-chat', system: 'Be brief.', messages: [{ role: 'user', content: 'hello' }] });
  assert.equal(counted.input_tokens, message.usage.input_tokens, 'the count is the prompt the create above was billed for');
  assert.deepEqual((counted as unknown as { svc_count: unknown }).svc_count, { backend: 'engine', method: 'engine_tokenizer' });
  assert.deepEqual(await store.ledgerTotal(accountId, await month()), before);
  assert.equal(before.rows, 4);

  const usage = await fetch(`${hosted.url}/api/v1/usage`, { headers: { 'x-api-key': secret } });
  const report = await usage.json() as { key: { requests: number; evidence: { evidence_id: string }[] } };
  assert.equal(report.key.requests, 4);
  assert.ok(report.key.evidence.some((e) => e.evidence_id === message.svc_route.evidence_id));

  // A bad key through the SDK: Anthropic's error class and envelope, the hosted code inside.
  const stranger = new Anthropic({ apiKey: 'svc_bad', baseURL: `${hosted.url}/api`, maxRetries: 0 });
  await assert.rejects(stranger.messages.create({ model: 'svc-chat', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
    assert.ok(error instanceof Anthropic.AuthenticationError);
    assert.equal((error.error as { error: { code: string } }).error.code, 'svc_api_key_required');
    return true;
  });
});
