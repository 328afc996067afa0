/**
 * `svc hosted` as a process on one machine with no configuration file: the embedded route
 * config's engine backend serves the tiny GGUF given with --model, the official `openai` client
 * gets real completions with a supercomputer key, every answer has its ledger row, and SIGTERM
 * mid-generation stops it with an error, billing what ran.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import OpenAI from 'openai';
import type { SvcRoute } from '../../src/accounts/svc-route.ts';
import { RaplMeter } from '../../src/hosted/routing/rapl-meter.ts';
import { readRest, startServerProcess, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';
import { prepareHostedDataDir as prepare } from '../helpers/hosted-stores.ts';

async function startHosted(t: TestContext, dataDir: string, args: string[] = []): Promise<DaemonProcess> {
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', tinyModelPath(), '--log-level', 'info', ...args]);
  t.after(() => hosted.stop());
  return hosted;
}

type WithRoute = { svc_route?: SvcRoute; svc_outcome?: string };

test('out of the box: --model serves hosted chat on the engine backend through the official openai client, stream and not, each with its ledger row', { timeout: 120_000 }, async (t) => {
  const { dataDir, store, accountId, secret } = await prepare(t);
  const hosted = await startHosted(t, dataDir);
  const started = hosted.logs.find((l) => Array.isArray(l.models));
  assert.deepEqual(started?.models, ['tiny-v1']);
  // Where this host exposes readable RAPL counters raw_joules is measured; elsewhere null, never invented.
  const measured = RaplMeter.open() !== null;
  assert.equal(started?.rapl, measured);

  // The models descriptor names hosted model ids, not weight files.
  const models = await (await fetch(`${hosted.url}/api/v1/models`)).json() as { data: { id: string }[] };
  assert.deepEqual(models.data.map((m) => m.id), ['svc-chat']);

  const client = new OpenAI({ apiKey: secret, baseURL: `${hosted.url}/api/v1`, maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 });
  const choice = completion.choices[0]!;
  assert.equal(choice.message.role, 'assistant');
  assert.ok(typeof choice.message.content === 'string' && choice.message.content.length > 0);
  assert.equal(completion.usage?.completion_tokens, 8);
  const route = (completion as unknown as WithRoute).svc_route!;
  assert.equal(route.provider, 'svc-llama.cpp');
  assert.equal(route.execution_plane, 'supercomputer');
  assert.equal(route.model, 'svc-chat');
  assert.equal(route.fallback, false);
  if (measured) assert.equal(typeof route.raw_joules, 'number');
  else assert.equal(route.raw_joules, null);
  assert.ok(route.estimated_joules > 0);
  const row = await store.findEvidence(accountId, route.evidence_id);
  assert.ok(row !== undefined, 'the ledger row of the non-streamed answer');
  assert.equal(row.outcome, 'completed');
  assert.equal(row.completionTokens, 8);
  assert.deepEqual(row.route, route);

  const stream = await client.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello again' }], max_tokens: 6, stream: true });
  let text = '';
  let last: WithRoute | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if ((chunk as unknown as WithRoute).svc_route !== undefined) last = chunk as unknown as WithRoute;
  }
  assert.ok(text.length > 0);
  assert.equal(last?.svc_outcome, 'completed');
  assert.equal(last?.svc_route?.provider, 'svc-llama.cpp');
  const streamed = await store.findEvidence(accountId, last!.svc_route!.evidence_id);
  assert.equal(streamed?.outcome, 'completed');
  const month = (await store.allowance(accountId)).month;
  const total = await store.ledgerTotal(accountId, month);
  assert.equal(total.rows, 2);
  assert.equal(total.joules, Math.round((route.billable_joules + last!.svc_route!.billable_joules) * 1000) / 1000);
});

test('with no model the server still starts, says how to add one, and hosted chat is a 502 hosted_route_unavailable naming the engine (nothing billed)', { timeout: 60_000 }, async (t) => {
  const { dataDir, store, accountId, secret } = await prepare(t);
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--log-level', 'info']);
  t.after(() => hosted.stop());
  const { url, logs } = hosted;
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(logs.some((l) => /no engine model/.test(String(l.msg)) && Array.isArray(l.models) && l.models.length === 0), JSON.stringify(logs));
  const res = await fetch(`${url}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` }, body: JSON.stringify({ model: 'svc-chat', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(res.status, 502);
  const body = await res.json() as { error: { code: string; docs_url: string; message: string } };
  assert.equal(body.error.code, 'hosted_route_unavailable');
  assert.equal(body.error.docs_url, '/docs/hosted#hosted_route_unavailable');
  assert.match(body.error.message, /engine_model_unavailable/);
  assert.equal((await store.ledgerTotal(accountId, (await store.allowance(accountId)).month)).rows, 0);
});

test('SIGTERM mid-generation: when the grace period ends the stream gets its usage and a server_shutting_down event, a non-streamed chat a 503, both billed; exit 0', { timeout: 120_000 }, async (t) => {
  const { dataDir, store, accountId, secret } = await prepare(t);
  const hosted = await startHosted(t, dataDir, ['--shutdown-timeout', '300ms', '--context-size', '8192']);
  const post = (stream: boolean) => fetch(`${hosted.url}/api/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'svc-chat', messages: [{ role: 'user', content: 'talk' }], max_tokens: 8000, stream }),
  });
  const plain = post(false);
  const res = await post(true);
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.ok(!first.done);
  // Both are generating now: the stream has produced output, the other started first.
  await new Promise((r) => setTimeout(r, 300));
  const code = hosted.stop('SIGTERM');
  const text = await readRest(reader, first.value);
  const plainRes = await plain;
  assert.equal(await code, 0);

  assert.ok(text.trimEnd().endsWith('data: [DONE]'), text.slice(-300));
  const events = text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
  const error = events.at(-1) as { error?: { code: string; docs_url: string } };
  assert.equal(error.error?.code, 'server_shutting_down');
  assert.equal(error.error?.docs_url, '/docs/hosted#server_shutting_down');
  const usage = events.at(-2) as WithRoute & { usage: { completion_tokens: number } };
  assert.equal(usage.svc_outcome, 'failed');
  assert.ok(usage.usage.completion_tokens > 0 && usage.usage.completion_tokens < 8000);

  assert.equal(plainRes.status, 503);
  const plainBody = await plainRes.json() as { error: { code: string } };
  assert.equal(plainBody.error.code, 'server_shutting_down');

  const row = await store.findEvidence(accountId, usage.svc_route!.evidence_id);
  assert.equal(row?.outcome, 'failed');
  assert.equal(row?.completionTokens, usage.usage.completion_tokens);
  const total = await store.ledgerTotal(accountId, (await store.allowance(accountId)).month);
  assert.equal(total.rows, 2, 'both stopped generations are billed');
  assert.ok(hosted.logs.some((l) => l.msg === 'grace period over: stopping generations'));
  assert.ok(hosted.logs.some((l) => l.msg === 'stopped'));
});
