/**
 * `POST /api/v1/messages` and `/messages/count_tokens` on the hosted tier, through the official
 * `@anthropic-ai/sdk` against the hosted app over a real store and a scripted upstream: the same
 * pipeline as chat completions (route headers, evidence, Joules, ledger, usage, limits,
 * idempotency), answered in Anthropic's shapes and envelope.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { FastifyInstance } from 'fastify';
import { SVC_ROUTE_FIELDS } from '../../../src/hosted/descriptors.ts';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import { buildChatFixture } from '../../helpers/hosted-chat-fixture.ts';
import { finishChunk, sse } from '../../helpers/scripted-upstream.ts';

const BODY = { model: 'svc-chat-small', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Say hello' }] };

type SvcFields = { svc_route: Record<string, unknown> & { evidence_id: string; billable_joules: number; provider: string }; svc_outcome: string };
interface Envelope { type: string; error: { type: string; message: string; code: string; docs_url: string; retry_after_seconds?: number } }

async function anthropicClient(app: FastifyInstance, secret: string): Promise<Anthropic> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  // The SDK appends /v1/messages; the hosted paths carry the /api prefix.
  return new Anthropic({ baseURL: `${address}/api`, apiKey: secret, maxRetries: 0 });
}

/** Named SSE events of a body, in order. */
function sseEvents(body: string): { event: string; data: Record<string, unknown> }[] {
  return body.split('\n\n').filter((b) => b.includes('data: ')).map((b) => {
    const event = /^event: (.+)$/m.exec(b)?.[1] ?? '';
    const data = JSON.parse(/^data: (.+)$/m.exec(b)![1]!) as Record<string, unknown>;
    return { event, data };
  });
}

test('create through the official SDK with x-api-key: a Message with svc_route, evidence header, one ledger row, the usage report counts it', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const client = await anthropicClient(f.app, a.secret);
  const { data, response } = await client.messages.create(BODY, { headers: { 'x-svc-project-id': 'proj-m' } }).withResponse();
  assert.equal(data.type, 'message');
  assert.deepEqual(data.content, [{ type: 'text', text: 'Hello world' }]);
  assert.equal(data.stop_reason, 'end_turn');
  assert.equal(data.usage.input_tokens, 10);
  assert.equal(data.usage.output_tokens, 2);
  const fields = data as unknown as SvcFields;
  assert.deepEqual(Object.keys(fields.svc_route).sort(), SVC_ROUTE_FIELDS.map((x) => x.name).sort());
  assert.equal(fields.svc_route.provider, 'mock-provider');
  assert.equal(fields.svc_route.billable_joules, 1.1, '10 × 0.01 J + 2 × 0.5 J, as chat completions');
  assert.equal(fields.svc_outcome, 'completed');
  assert.equal(response.headers.get('x-svc-evidence-id'), fields.svc_route.evidence_id);
  assert.equal(response.headers.get('x-svc-queue-class'), 'interactive');
  // The upstream got the translated turns, as chat completions would send them.
  assert.deepEqual((f.upstream.requests[0]!.body as { messages: unknown }).messages, [{ role: 'user', content: 'Say hello' }]);

  const month = (await f.store.allowance(a.accountId)).month;
  assert.deepEqual(await f.store.ledgerTotal(a.accountId, month), { joules: 1.1, rows: 1 });
  const row = await f.store.findEvidence(a.accountId, fields.svc_route.evidence_id);
  assert.equal(row?.projectId, 'proj-m');
  assert.deepEqual(row?.route, fields.svc_route);

  // The usage report (read with x-api-key too) counts the request and names its evidence.
  const usage = await f.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': a.secret } });
  assert.equal(usage.statusCode, 200, usage.body);
  const u = usage.json<{ key: { requests: number; joules: number; evidence: { evidence_id: string }[] }; projects: { project_id: string; requests: number }[] }>();
  assert.equal(u.key.requests, 1);
  assert.equal(u.key.joules, 1.1);
  assert.deepEqual(u.key.evidence.map((e) => e.evidence_id), [fields.svc_route.evidence_id]);
  assert.deepEqual(u.projects.map((p) => [p.project_id, p.requests]), [['proj-m', 1]]);
});

test('streamed: Anthropic\'s event sequence, svc_route on message_delta (billed before it), and the SDK\'s stream helper assembles the Message', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const raw = await f.app.inject({ method: 'POST', url: '/api/v1/messages', headers: { 'x-api-key': a.secret, 'anthropic-version': '2023-06-01' }, payload: { ...BODY, stream: true } });
  assert.equal(raw.statusCode, 200);
  assert.ok(!raw.body.includes('[DONE]'));
  const events = sseEvents(raw.body);
  assert.deepEqual(events.map((e) => e.event), [
    'message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
  ]);
  const delta = events.at(-2)!.data as { delta: { stop_reason: string }; usage: { output_tokens: number } } & SvcFields;
  assert.equal(delta.delta.stop_reason, 'end_turn');
  assert.equal(delta.usage.output_tokens, 2);
  assert.equal(delta.svc_outcome, 'completed');
  const row = await f.store.findEvidence(a.accountId, delta.svc_route.evidence_id);
  assert.equal(row?.outcome, 'completed', 'the evidence on message_delta is already stored');

  const client = await anthropicClient(f.app, a.secret);
  const stream = client.messages.stream(BODY);
  let text = '';
  stream.on('text', (d) => {
    text += d;
  });
  const message = await stream.finalMessage();
  assert.equal(text, 'Hello world');
  assert.deepEqual(message.content, [{ type: 'text', text: 'Hello world' }]);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal((await f.store.ledgerTotal(a.accountId, (await f.store.allowance(a.accountId)).month)).rows, 2);
});

test('tool use round trip: the upstream\'s tool call is a tool_use block (streamed as input_json_delta), and the tool_result goes back as a tool turn', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const call = { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, finish_reason: null }] };
  f.upstream.handle(sse([call, finishChunk('tool_calls', { usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }), '[DONE]']));
  const client = await anthropicClient(f.app, a.secret);
  const tools = [{ name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }];
  const first = await client.messages.create({ ...BODY, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: { type: 'any' } });
  assert.equal(first.stop_reason, 'tool_use');
  assert.deepEqual(first.content, [{ type: 'tool_use', id: 'toolu_abc', name: 'get_weather', input: { city: 'Paris' } }]);
  const sent = f.upstream.requests[0]!.body as { tools: { function: { name: string } }[]; tool_choice: unknown };
  assert.equal(sent.tools[0]!.function.name, 'get_weather');
  assert.equal(sent.tool_choice, 'required');

  const streamed = await client.messages.stream({ ...BODY, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools }).finalMessage();
  assert.deepEqual(streamed.content, first.content);

  f.upstream.handle(sse([{ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Sunny.' }, finish_reason: null }] }, finishChunk('stop'), '[DONE]']));
  const second = await client.messages.create({
    ...BODY, tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_abc', content: '21 C, sun' }] },
    ],
  });
  assert.deepEqual(second.content, [{ type: 'text', text: 'Sunny.' }]);
  const turns = (f.upstream.requests.at(-1)!.body as { messages: { role: string; content: unknown; tool_call_id?: string }[] }).messages;
  assert.deepEqual(turns.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.equal(turns[2]!.tool_call_id, 'toolu_abc');
  assert.equal(turns[2]!.content, '21 C, sun');
  assert.equal((await f.store.ledgerTotal(a.accountId, (await f.store.allowance(a.accountId)).month)).rows, 3);
});

test('count_tokens: counted on the planned backend (an upstream: the upper bound), limited, not billed, nothing generated', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const client = await anthropicClient(f.app, a.secret);
  const counted = await client.messages.countTokens({ model: BODY.model, messages: BODY.messages });
  assert.ok(counted.input_tokens > 0);
  assert.deepEqual((counted as unknown as { svc_count: unknown }).svc_count, { backend: 'mock', method: 'upper_bound' });
  const longer = await client.messages.countTokens({ model: BODY.model, messages: [{ role: 'user', content: 'Say hello '.repeat(50) }] });
  assert.ok(longer.input_tokens > counted.input_tokens);
  assert.equal(f.upstream.requests.length, 0, 'no backend call');
  assert.equal((await f.store.ledgerTotal(a.accountId, (await f.store.allowance(a.accountId)).month)).rows, 0);
  const unknown = await f.app.inject({ method: 'POST', url: '/api/v1/messages/count_tokens', headers: { 'x-api-key': a.secret }, payload: { model: 'nope', messages: BODY.messages } });
  assert.equal(unknown.statusCode, 404, unknown.body);
  assert.equal(unknown.json<Envelope>().type, 'error');
});

test('errors in Anthropic\'s envelope with the hosted code: a bad key is 401 authentication_error, two different keys too, a bad body 400', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const client = await anthropicClient(f.app, 'svc_not_a_key');
  await assert.rejects(client.messages.create(BODY), (error: unknown) => {
    assert.ok(error instanceof Anthropic.AuthenticationError);
    const body = error.error as Envelope;
    assert.equal(body.type, 'error');
    assert.deepEqual([body.error.type, body.error.code, body.error.docs_url], ['authentication_error', 'svc_api_key_required', '/docs/hosted#svc_api_key_required']);
    return true;
  });
  const both = await f.app.inject({ method: 'POST', url: '/api/v1/messages', headers: { 'x-api-key': a.secret, authorization: 'Bearer svc_other' }, payload: BODY });
  assert.equal(both.statusCode, 401);
  assert.match(both.json<Envelope>().error.message, /different keys/);
  const none = await f.app.inject({ method: 'POST', url: '/api/v1/messages', payload: BODY });
  assert.equal(none.statusCode, 401);
  assert.equal(none.json<Envelope>().error.type, 'authentication_error');
  const bad = await f.app.inject({ method: 'POST', url: '/api/v1/messages', headers: { authorization: `Bearer ${a.secret}` }, payload: { model: BODY.model, messages: BODY.messages } });
  assert.equal(bad.statusCode, 400);
  const e = bad.json<Envelope>();
  assert.equal(e.type, 'error');
  assert.equal(e.error.type, 'invalid_request_error');
  assert.match(e.error.message, /max_tokens/);
  const devKey = await f.account({}, 'developer_runtime');
  const identityOnly = await f.app.inject({ method: 'POST', url: '/api/v1/messages', headers: { 'x-api-key': devKey.secret }, payload: BODY });
  assert.equal(identityOnly.statusCode, 402);
  assert.deepEqual([identityOnly.json<Envelope>().error.type, identityOnly.json<Envelope>().error.code], ['billing_error', 'insufficient_quota']);
  assert.equal(f.upstream.requests.length, 0);
});

test('the backstop limiter: 429 rate_limit_error in Anthropic\'s envelope with retry_after_seconds and the contract\'s headers; count_tokens takes from it too', async (t) => {
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.1, burst: 2 } } });
  const f = await buildChatFixture(t, { limiter });
  const a = await f.account();
  const client = await anthropicClient(f.app, a.secret);
  await client.messages.countTokens({ model: BODY.model, messages: BODY.messages });
  await client.messages.create(BODY);
  await assert.rejects(client.messages.create(BODY).withResponse(), (error: unknown) => {
    assert.ok(error instanceof Anthropic.RateLimitError);
    const body = error.error as Envelope;
    assert.equal(body.error.type, 'rate_limit_error');
    assert.ok((body.error.retry_after_seconds ?? 0) >= 1);
    assert.ok(Number(error.headers?.get('retry-after')) >= 1);
    assert.equal(error.headers?.get('x-svc-queue-class'), 'interactive');
    assert.ok(error.headers?.get('x-svc-backpressure-state') !== null);
    return true;
  });
  assert.equal(f.upstream.requests.length, 1);
});

test('Joules: a spent allowance is 402 billing_error joule_allowance_exhausted; a run cut by what was left ends in max_tokens and says stopped_at_joule_ceiling', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account({ monthlyJouleAllowance: 1.5 });
  const client = await anthropicClient(f.app, a.secret);
  const first = await client.messages.create(BODY) as Anthropic.Message & SvcFields;
  assert.equal(first.svc_outcome, 'stopped_at_joule_ceiling');
  assert.equal(first.stop_reason, 'max_tokens');
  await assert.rejects(client.messages.create(BODY), (error: unknown) => {
    assert.ok(error instanceof Anthropic.APIError);
    assert.equal(error.status, 402);
    const body = error.error as Envelope;
    assert.deepEqual([body.error.type, body.error.code, body.error.docs_url], ['billing_error', 'joule_allowance_exhausted', '/docs/hosted#joule_allowance_exhausted']);
    return true;
  });
  assert.equal(f.upstream.requests.length, 1);
  const ceiling = await f.app.inject({ method: 'POST', url: '/api/v1/messages', headers: { 'x-api-key': (await f.account()).secret, 'x-svc-max-joules': '0' }, payload: BODY });
  assert.equal(ceiling.statusCode, 400);
  assert.equal(ceiling.json<Envelope>().error.code, 'joule_ceiling_too_low');
});

test('Idempotency-Key: a retry gets the stored Message (whole or as its event stream) without a second run; a key used on chat completions is not replayed here', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const post = (payload: Record<string, unknown>, key: string, url = '/api/v1/messages') => f.app.inject({ method: 'POST', url, headers: { 'x-api-key': a.secret, 'idempotency-key': key }, payload });
  const first = await post(BODY, 'k1');
  const again = await post(BODY, 'k1');
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.deepEqual(again.json(), first.json());
  assert.equal(f.upstream.requests.length, 1);

  const streamed = await post({ ...BODY, stream: true }, 'k2');
  const replay = await post({ ...BODY, stream: true }, 'k2');
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  const live = sseEvents(streamed.body);
  const replayed = sseEvents(replay.body);
  assert.equal(replayed.at(0)!.event, 'message_start');
  assert.deepEqual(replayed.at(-2)!.data, live.at(-2)!.data, 'the same message_delta, evidence included');
  assert.equal(replayed.filter((e) => e.event === 'content_block_delta').map((e) => (e.data.delta as { text: string }).text).join(''), 'Hello world');
  assert.equal(f.upstream.requests.length, 2);

  const chatBody = { model: BODY.model, max_tokens: 64, messages: BODY.messages };
  assert.equal((await post(chatBody, 'k3', '/api/v1/chat/completions')).statusCode, 200);
  const crossed = await post(chatBody, 'k3');
  assert.equal(crossed.statusCode, 422);
  assert.equal(crossed.json<Envelope>().error.code, 'idempotency_key_reused');
  assert.equal(f.upstream.requests.length, 3);
});
