import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { SVC_ROUTE_FIELDS } from '../../../src/hosted/descriptors.ts';
import { buildChatFixture, wordsAnswer } from '../../helpers/hosted-chat-fixture.ts';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import { answer, contentChunk, finishChunk, sse } from '../../helpers/scripted-upstream.ts';
import { postgresUnavailable } from '../../helpers/test-services.ts';

const BODY = { model: 'svc-chat-small', messages: [{ role: 'user', content: 'Say hello' }] };
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });

interface Completion {
  id: string;
  choices: { message: { content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number };
  svc_route: Record<string, unknown> & { evidence_id: string; billable_joules: number; estimated_joules: number; raw_joules: number | null };
  svc_outcome: string;
}

interface Envelope { error: { code: string; type: string; message: string; docs_url: string; retry_after_seconds?: number } }

/** Parses an SSE body into its data payloads (`[DONE]` kept as the string). */
function sseData(body: string): unknown[] {
  return body.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => {
    const data = b.slice(6);
    return data === '[DONE]' ? data : JSON.parse(data) as unknown;
  });
}

async function openAIClient(app: Awaited<ReturnType<typeof buildChatFixture>>['app'], secret: string, prefix = '/api/v1'): Promise<OpenAI> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return new OpenAI({ baseURL: `${address}${prefix}`, apiKey: secret, maxRetries: 0 });
}

for (const kind of ['sqlite', 'postgres'] as const) {
  test(`[${kind}] non-streamed chat: svc_route with all twelve fields, one ledger row, evidence retrievable, allowance moved`, { skip: kind === 'postgres' ? await postgresUnavailable('the [postgres] non-streamed chat test') : false }, async (t) => {
    const f = await buildChatFixture(t, { kind });
    const a = await f.account();
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-project-id': 'proj-1' }, payload: BODY });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-svc-queue-class'], 'interactive');
    const body = res.json<Completion>();
    assert.equal(body.choices[0]!.message.content, 'Hello world');
    assert.deepEqual(Object.keys(body.svc_route).sort(), SVC_ROUTE_FIELDS.map((x) => x.name).sort());
    assert.equal(body.svc_route.provider, 'mock-provider');
    assert.equal(body.svc_route.raw_joules, null, 'no measurement from an upstream: null, never invented');
    // 10 prompt tokens × 0.01 J + 2 completion tokens × 0.5 J.
    assert.equal(body.svc_route.estimated_joules, 1.1);
    assert.equal(body.svc_route.billable_joules, 1.1);
    assert.equal(body.svc_outcome, 'completed');
    assert.equal(res.headers['x-svc-evidence-id'], body.svc_route.evidence_id);

    const total = await f.store.ledgerTotal(a.accountId, (await f.store.allowance(a.accountId)).month);
    assert.deepEqual(total, { joules: 1.1, rows: 1 });
    assert.equal((await f.store.allowance(a.accountId)).usedJoules, 1.1);

    const ev = await f.app.inject({ url: `/api/v1/evidence/${body.svc_route.evidence_id}`, headers: auth(a.secret) });
    assert.equal(ev.statusCode, 200);
    const evidence = ev.json<{ svc_route: unknown; outcome: string; project_id: string; key_id: string; prompt_tokens: number }>();
    assert.deepEqual(evidence.svc_route, body.svc_route);
    assert.equal(evidence.outcome, 'completed');
    assert.equal(evidence.project_id, 'proj-1');
    assert.equal(evidence.key_id, a.keyId);

    // Another account sees nothing, exactly as for an id that does not exist.
    const other = await f.account();
    const foreign = await f.app.inject({ url: `/api/v1/evidence/${body.svc_route.evidence_id}`, headers: auth(other.secret) });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json<Envelope>().error.code, 'evidence_not_found');
    const unknown = await f.app.inject({ url: '/api/v1/evidence/ev_doesnotexist', headers: auth(a.secret) });
    assert.equal(unknown.body.replace(/ev_\w+/, ''), foreign.body.replace(/ev_\w+/, ''));
  });
}

test('streamed chat through the official openai client: the local chunks, then svc_route on a last chunk with empty choices, billed before [DONE]', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const client = await openAIClient(f.app, a.secret);
  const stream = await client.chat.completions.create({ ...BODY, messages: [{ role: 'user', content: 'Say hello' }], stream: true });
  let text = '';
  const chunks: unknown[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    text += chunk.choices[0]?.delta.content ?? '';
  }
  assert.equal(text, 'Hello world');
  const last = chunks.at(-1) as { choices: unknown[]; svc_route: Completion['svc_route']; svc_outcome: string; usage: unknown };
  assert.deepEqual(last.choices, []);
  assert.deepEqual(Object.keys(last.svc_route).sort(), SVC_ROUTE_FIELDS.map((x) => x.name).sort());
  assert.equal(last.svc_outcome, 'completed');
  const beforeLast = chunks.at(-2) as { choices: { finish_reason: string }[] };
  assert.equal(beforeLast.choices[0]!.finish_reason, 'stop');
  const entry = await f.store.findEvidence(a.accountId, last.svc_route.evidence_id);
  assert.ok(entry, 'the ledger row exists once the stream is done');
  assert.equal(entry.route.billable_joules, last.svc_route.billable_joules);
});

test('non-streamed chat through the official openai client reads choices[0].message.content', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const client = await openAIClient(f.app, a.secret);
  const completion = await client.chat.completions.create({ model: 'svc-chat-small', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(completion.choices[0]!.message.content, 'Hello world');
});

test('entitlement: no key 401, developer_runtime key or unentitled account 402 insufficient_quota, nothing called; every answer has x-svc-queue-class', async (t) => {
  const f = await buildChatFixture(t);
  const none = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', payload: BODY });
  assert.equal(none.statusCode, 401);
  assert.equal(none.json<Envelope>().error.code, 'svc_api_key_required');
  assert.equal(none.headers['x-svc-queue-class'], 'interactive');
  const dev = await f.account({}, 'developer_runtime');
  const r1 = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(dev.secret), payload: BODY });
  assert.equal(r1.statusCode, 402);
  assert.deepEqual([r1.json<Envelope>().error.type, r1.json<Envelope>().error.code], ['insufficient_quota', 'insufficient_quota']);
  const unpaid = await f.account({ hostedEntitlement: false });
  const r2 = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(unpaid.secret), payload: BODY });
  assert.equal(r2.statusCode, 402);
  assert.equal(r2.json<Envelope>().error.code, 'insufficient_quota');
  assert.equal(f.upstream.requests.length, 0);
  // The usage report is part of the paid surface too (issue 9: chat and usage).
  for (const secret of [dev.secret, unpaid.secret]) {
    const usage = await f.app.inject({ method: 'GET', url: '/api/v1/usage', headers: auth(secret) });
    assert.equal(usage.statusCode, 402);
    assert.equal(usage.json<Envelope>().error.code, 'insufficient_quota');
  }
});

test('the answer is kept in the ledger only when an Idempotency-Key may need it back; a key\'s project attributes requests without the header', async (t) => {
  const f = await buildChatFixture(t);
  const account = await f.store.createAccount({ name: 'p', plan: { monthlyJouleAllowance: 1000, hostedEntitlement: true, enterprise: false } });
  const issued = await f.store.issueKey(account.id, { scope: 'supercomputer', project: 'proj-from-key' });
  const plain = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(issued.secret), payload: BODY });
  const plainEntry = await f.store.findEvidence(account.id, plain.json<Completion>().svc_route.evidence_id);
  assert.equal(plainEntry?.response, null, 'no key to replay: no content kept');
  assert.equal(plainEntry?.projectId, 'proj-from-key');
  const keyed = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(issued.secret), 'idempotency-key': 'k1', 'x-svc-project-id': 'proj-header' }, payload: BODY });
  const keyedEntry = await f.store.findEvidence(account.id, keyed.json<Completion>().svc_route.evidence_id);
  assert.notEqual(keyedEntry?.response, null);
  assert.equal(keyedEntry?.projectId, 'proj-header', 'the header wins over the key\'s project');
});

test('a store that does not answer the key check: 503 ledger_unavailable with Retry-After, not a 500', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const original = f.store.checkKey.bind(f.store);
  // The store's connection is gone: the real store closed under the app.
  f.store.checkKey = async () => { throw new Error('database is closed'); };
  t.after(() => { f.store.checkKey = original; });
  for (const request of [
    { method: 'POST' as const, url: '/api/v1/chat/completions', payload: BODY },
    { method: 'GET' as const, url: '/api/v1/usage' },
  ]) {
    const res = await f.app.inject({ ...request, headers: auth(a.secret) });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json<Envelope>().error.code, 'ledger_unavailable');
    assert.equal(res.headers['retry-after'], '1');
  }
});

test('what is left of the allowance caps a request; a spent one (or one too small for a prompt and a token) is 402 joule_allowance_exhausted before any backend call', async (t) => {
  const f = await buildChatFixture(t);
  // The upstream's prompt bound ('Say hello': 85 tokens, 0.85 J) and one token (0.5 J) fit 1.5 J; two do not.
  const a = await f.account({ monthlyJouleAllowance: 1.5 });
  const first = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: BODY });
  assert.equal(first.statusCode, 200, 'with 1.5 J left the request runs');
  // ... but what is left is its ceiling: it stops before the token that would cross 1.5 J.
  const done = first.json<Completion & { svc_outcome: string }>();
  assert.equal(done.svc_outcome, 'stopped_at_joule_ceiling');
  assert.equal(done.svc_route.billable_joules, done.svc_route.estimated_joules, 'billed for the work');
  assert.ok((await f.store.allowance(a.accountId)).usedJoules <= 1.5);
  assert.equal(f.upstream.requests.length, 1);
  const second = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: BODY });
  assert.equal(second.statusCode, 402);
  const e = second.json<Envelope>().error;
  assert.deepEqual([e.type, e.code, e.docs_url], ['insufficient_quota', 'joule_allowance_exhausted', '/docs/hosted#joule_allowance_exhausted']);
  assert.equal(f.upstream.requests.length, 1, 'no backend call');
});

test('the real limiter is asked per key and queue class; a refusal is 429 rate_limit_error with retry_after_seconds and the three headers', async (t) => {
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.1, burst: 1 } } });
  const f = await buildChatFixture(t, { limiter });
  const a = await f.account();
  const ok = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-execution-policy': 'supercomputer-deep' }, payload: BODY });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers['x-svc-queue-class'], 'deep');
  assert.equal(ok.headers['x-svc-backpressure-state'], 'normal');
  const limited = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: BODY });
  assert.equal(limited.statusCode, 429);
  const e = limited.json<Envelope>().error;
  assert.deepEqual([e.type, e.code], ['rate_limit_error', 'rate_limit_exceeded']);
  assert.ok(e.retry_after_seconds !== undefined && e.retry_after_seconds >= 1);
  assert.equal(limited.headers['retry-after'], String(e.retry_after_seconds));
  assert.equal(limited.headers['x-svc-queue-class'], 'interactive');
  assert.ok(limited.headers['x-svc-backpressure-state']);
  assert.equal(f.upstream.requests.length, 1, 'the refused request called nothing');
  // Another key of the same account has its own bucket.
  const b = await f.store.issueKey(a.accountId, { scope: 'supercomputer' });
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(b.secret), payload: BODY })).statusCode, 200);
  // Every other key-protected route takes from the key's bucket right after authentication
  // (chat took exactly one above, not two): a fresh key reads its usage once, then 429.
  const c = await f.store.issueKey(a.accountId, { scope: 'supercomputer' });
  assert.equal((await f.app.inject({ url: '/api/v1/usage', headers: auth(c.secret) })).statusCode, 200);
  const usageLimited = await f.app.inject({ url: '/api/v1/usage', headers: auth(c.secret) });
  assert.equal(usageLimited.statusCode, 429);
  assert.equal(usageLimited.json<Envelope>().error.code, 'rate_limit_exceeded');
  assert.equal((await f.app.inject({ url: '/api/v1/evidence/ev_x', headers: auth(b.secret) })).statusCode, 429, 'b spent its one request on chat');
});

test('upstream unavailable: a server_error with Retry-After, x-svc-queue-class and x-svc-backpressure-state; nothing billed', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  f.upstream.handle(answer(503, { error: { message: 'overloaded' } }));
  const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: BODY });
  assert.ok(res.statusCode === 502 || res.statusCode === 503, String(res.statusCode));
  assert.equal(res.json<Envelope>().error.type, 'server_error');
  assert.equal(res.headers['x-svc-backpressure-state'], 'normal');
  assert.ok(res.headers['retry-after']);
  assert.equal(res.headers['x-svc-queue-class'], 'interactive');
  if (res.statusCode === 503) assert.ok(res.headers['retry-after']);
  assert.equal((await f.store.allowance(a.accountId)).usedJoules, 0);
});

test('Idempotency-Key: a retry gets the stored JSON (same evidence_id) and is billed once; another body with the key is 422', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const headers = { ...auth(a.secret), 'idempotency-key': 'retry-1' };
  const first = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: BODY });
  const second = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: BODY });
  assert.equal(second.statusCode, 200);
  assert.deepEqual(second.json(), first.json());
  assert.equal(second.headers['idempotent-replayed'], 'true');
  assert.equal(second.headers['x-svc-evidence-id'], first.json<Completion>().svc_route.evidence_id, 'the replay names its evidence too');
  assert.equal(f.upstream.requests.length, 1, 'the retry ran nothing');
  const month = (await f.store.allowance(a.accountId)).month;
  assert.deepEqual(await f.store.ledgerTotal(a.accountId, month), { joules: 1.1, rows: 1 });

  const changed = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, messages: [{ role: 'user', content: 'other' }] } });
  assert.equal(changed.statusCode, 422);
  assert.equal(changed.json<Envelope>().error.code, 'idempotency_key_reused');
  const streamed = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, stream: true } });
  assert.equal(streamed.statusCode, 422, 'the same key as a stream is another request');

  // Per account: another account's identical key is its own request.
  const b = await f.account();
  const theirs = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(b.secret), 'idempotency-key': 'retry-1' }, payload: BODY });
  assert.notEqual(theirs.json<Completion>().svc_route.evidence_id, first.json<Completion>().svc_route.evidence_id);

  const bad = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'idempotency-key': 'has space' }, payload: BODY });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json<Envelope>().error.code, 'invalid_idempotency_key');
});

test('Idempotency-Key on a stream: the retry replays the stored completion as a stream; while the first runs, 409', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  f.upstream.handle(async (req, res) => {
    await gate;
    await wordsAnswer(['Hi', ' there'])(req, res);
  });
  const headers = { ...auth(a.secret), 'idempotency-key': 'stream-1' };
  const firstP = f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, stream: true } });
  while (f.upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  const during = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, stream: true } });
  assert.equal(during.statusCode, 409);
  assert.equal(during.json<Envelope>().error.code, 'idempotency_key_in_progress');
  release();
  const first = await firstP;
  const replayed = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, stream: true } });
  assert.equal(replayed.statusCode, 200);
  const a1 = sseData(first.body);
  const a2 = sseData(replayed.body);
  const text = (events: unknown[]) => events.map((e) => (e as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '').join('');
  assert.equal(text(a1), 'Hi there');
  assert.equal(text(a2), 'Hi there');
  assert.equal(a2.at(-1), '[DONE]');
  const route = (events: unknown[]) => (events.at(-2) as { svc_route: { evidence_id: string } }).svc_route.evidence_id;
  assert.equal(route(a2), route(a1));
  assert.equal(f.upstream.requests.length, 1);
});

test('a stream stopped at x-svc-max-joules ends with finish_reason length and svc_outcome stopped_at_joule_ceiling, billed for the work the backend reports', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  f.upstream.handle(wordsAnswer(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']));
  // The prompt bound ('Say hello': 85 tokens) is 0.85 J; each token 0.5 J: a 2 J ceiling leaves room for 2 tokens.
  const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-max-joules': '2' }, payload: { ...BODY, stream: true } });
  const events = sseData(res.body);
  const finish = events.find((e) => (e as { choices?: { finish_reason?: string }[] }).choices?.[0]?.finish_reason != null) as { choices: { finish_reason: string }[] };
  assert.equal(finish.choices[0]!.finish_reason, 'length');
  const last = events.at(-2) as { svc_route: { billable_joules: number; evidence_id: string }; svc_outcome: string };
  assert.equal(last.svc_outcome, 'stopped_at_joule_ceiling');
  const text = events.map((e) => (e as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '').join('');
  assert.equal(text, 'ab', 'the client gets what fits the ceiling');
  // This upstream sent all eight words and its usage in one burst: it did that work, and the bill
  // says so (never less than the evidence reports), though the client was sent two.
  assert.equal(last.svc_route.billable_joules, (last.svc_route as unknown as { estimated_joules: number }).estimated_joules);
  const entry = await f.store.findEvidence(a.accountId, last.svc_route.evidence_id);
  assert.equal(entry?.outcome, 'stopped_at_joule_ceiling');
});

test('a client that disconnects mid-stream is still billed for what ran', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  f.upstream.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }] })}\n\n`);
    // Never ends: the client leaves first.
  });
  const client = await openAIClient(f.app, a.secret);
  const controller = new AbortController();
  const stream = await client.chat.completions.create({ model: 'svc-chat-small', messages: [{ role: 'user', content: 'go' }], stream: true }, { signal: controller.signal });
  let seen = '';
  try {
    for await (const chunk of stream) {
      seen += chunk.choices[0]?.delta.content ?? '';
      if (seen === 'partial') controller.abort();
    }
  } catch {
    // The client's own abort: the openai client may end the iteration or throw.
  }
  assert.equal(seen, 'partial');
  const month = (await f.store.allowance(a.accountId)).month;
  let total = await f.store.ledgerTotal(a.accountId, month);
  for (let i = 0; i < 100 && total.rows === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    total = await f.store.ledgerTotal(a.accountId, month);
  }
  assert.equal(total.rows, 1);
  assert.ok(total.joules > 0);
});

test('usage reports the ledger: used, remaining, daily, per key and per project, evidence ids with Joules, source_descriptor', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  for (const project of ['p1', 'p1', 'p2']) {
    const r = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-project-id': project }, payload: BODY });
    assert.equal(r.statusCode, 200);
  }
  await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: BODY });
  const dev = await f.store.issueKey(a.accountId, { scope: 'developer_runtime' });
  const res = await f.app.inject({ url: '/api/v1/usage', headers: auth(a.secret) });
  assert.equal(res.statusCode, 200);
  const u = res.json<{
    accounting_source: string; joules_used: number; joules_remaining: number; daily: { joules: number; requests: number }[];
    key: { key_id: string; requests: number; joules: number; evidence: { evidence_id: string; joules: number }[] };
    projects: { project_id: string; requests: number; joules: number; evidence: unknown[] }[];
    source_descriptor: { scope: { account_id: string; key_id: string; project_ids: string[] }; ledger_keys: string[] };
  }>();
  const month = (await f.store.allowance(a.accountId)).month;
  const ledger = await f.store.ledgerTotal(a.accountId, month);
  assert.equal(u.accounting_source, 'ledger');
  assert.equal(u.joules_used, ledger.joules);
  assert.equal(u.joules_used, 4.4);
  assert.equal(u.joules_remaining, 995.6);
  assert.equal(u.daily.reduce((n, d) => n + d.requests, 0), 4);
  assert.equal(u.key.requests, 4);
  assert.equal(u.key.evidence.length, 4);
  assert.deepEqual(u.projects.map((p) => [p.project_id, p.requests]).sort(), [['p1', 2], ['p2', 1]]);
  assert.deepEqual(u.source_descriptor.scope, { account_id: a.accountId, key_id: a.keyId, project_ids: u.projects.map((p) => p.project_id) });
  assert.ok(u.source_descriptor.ledger_keys.length >= 2);

  // A developer_runtime key is identity only: no usage report (issue 9: auth on chat and usage).
  const devUsage = await f.app.inject({ url: '/api/v1/usage', headers: auth(dev.secret) });
  assert.equal(devUsage.statusCode, 402);
  assert.equal((await f.app.inject({ url: '/api/v1/usage' })).statusCode, 401);
  assert.equal((await f.app.inject({ url: '/api/v1/usage?month=2025-13', headers: auth(a.secret) })).statusCode, 400);
});

test('usage with the ledger store not answering: 503 that says unavailable, with no figures', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  // The key check must still pass, so only the report's query fails (as a dropped connection would).
  f.store.usage = async () => {
    throw new Error('connection terminated unexpectedly');
  };
  const res = await f.app.inject({ url: '/api/v1/usage', headers: auth(a.secret) });
  assert.equal(res.statusCode, 503);
  const body = res.json<Envelope & { accounting_source: string }>();
  assert.equal(body.accounting_source, 'unavailable');
  assert.equal(body.error.code, 'ledger_unavailable');
  assert.doesNotMatch(res.body, /joules/);
  assert.doesNotMatch(res.body, /connection terminated/, 'a 5xx never echoes internals');
});

test('enterprise fleet mode: /v1/chat/completions takes enterprise keys only; /api/v1 takes both', async (t) => {
  const f = await buildChatFixture(t, { enterprise: true });
  const plain = await f.account();
  const ent = await f.account({ enterprise: true });
  const refused = await f.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(plain.secret), payload: BODY });
  assert.equal(refused.statusCode, 403);
  assert.equal(refused.json<Envelope>().error.code, 'enterprise_plan_required');
  const ok = await f.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { ...auth(ent.secret), 'x-svc-execution-policy': 'enterprise-private' }, payload: BODY });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.headers['x-svc-queue-class'], 'enterprise');
  const evidenceId = ok.json<Completion>().svc_route.evidence_id;
  assert.equal((await f.app.inject({ url: `/v1/evidence/${evidenceId}`, headers: auth(ent.secret) })).statusCode, 200);
  assert.equal((await f.app.inject({ url: '/v1/usage', headers: auth(ent.secret) })).statusCode, 200);
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(plain.secret), payload: BODY })).statusCode, 200);
});

test('x-svc-max-joules is checked against the prompt as the backend will process it: tools, the template and dense text count, refused before any call', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const description = Array.from({ length: 440 }, (_, i) => `word${i % 37}`).join(' ');
  const tools = [{ type: 'function', function: { name: 'lookup', description, parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
  for (const [what, payload] of [
    // Bytes ÷ 4 over message text put each of these under 1 J (0.05 J, 0.49 J of prompt, with a 0.5 J token).
    ['a ~440-word tool description', { ...BODY, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, tools }],
    ['text that tokenizes densely', { ...BODY, messages: [{ role: 'user', content: '語'.repeat(60) }], max_tokens: 4 }],
  ] as const) {
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-max-joules': '1' }, payload });
    assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
    assert.equal(res.json<Envelope>().error.code, 'joule_ceiling_too_low', what);
  }
  assert.equal(f.upstream.requests.length, 0, 'nothing was sent to the backend');
  assert.deepEqual(await f.store.ledgerTotal(a.accountId, (await f.store.allowance(a.accountId)).month), { joules: 0, rows: 0 });
});

test('an answered request is never billed less than the work its evidence reports, whatever x-svc-max-joules said', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  // The backend counts far more prompt than the text shows (a template, a tool list it adds itself).
  f.upstream.handle(sse([contentChunk('ok'), finishChunk('stop', { usage: { prompt_tokens: 3708, completion_tokens: 1, total_tokens: 3709 } }), '[DONE]']));
  const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-max-joules': '2' }, payload: { ...BODY, max_tokens: 1 } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<Completion>();
  assert.equal(body.usage.prompt_tokens, 3708);
  // 3708 × 0.01 + 1 × 0.5: the ceiling bounded the work it could see, the bill is the work.
  assert.equal(body.svc_route.estimated_joules, 37.58);
  assert.equal(body.svc_route.billable_joules, 37.58);
  assert.equal((await f.store.allowance(a.accountId)).usedJoules, 37.58);
});

test('every request that reaches the route takes from the limiter first: validation errors, refusals and idempotent replays too', async (t) => {
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.01, burst: 4 } } });
  const f = await buildChatFixture(t, { limiter });
  const a = await f.account();
  const headers = { ...auth(a.secret), 'idempotency-key': 'once' };
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: BODY })).statusCode, 200);
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: BODY })).headers['idempotent-replayed'], 'true');
  // A body the schema refuses (400) and an Idempotency-Key reused for another body (422).
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(a.secret), payload: { model: 'svc-chat-small', messages: 'nope' } })).statusCode, 400);
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: { ...BODY, temperature: 0.5 } })).statusCode, 422);
  // Four takes spent: the replay is refused like anything else.
  const limited = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers, payload: BODY });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.json<Envelope>().error.code, 'rate_limit_exceeded');
  assert.equal(f.upstream.requests.length, 1);
});

test('keys minted at will do not multiply an account\'s rate: the account bucket is shared by all its keys', async (t) => {
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.01, burst: 2 }, account: { requests_per_second: 0.01, burst: 3 } } });
  const f = await buildChatFixture(t, { limiter });
  const a = await f.account();
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const key = await f.store.issueKey(a.accountId, { scope: 'supercomputer' });
    statuses.push((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(key.secret), payload: BODY })).statusCode);
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  // Another account is not held back.
  const b = await f.account();
  assert.equal((await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth(b.secret), payload: BODY })).statusCode, 200);
});

test('x-svc-max-joules at the edges: 0 is 400 joule_ceiling_too_low, the largest valid value runs (no 5xx)', async (t) => {
  const f = await buildChatFixture(t);
  const a = await f.account();
  const zero = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-max-joules': '0' }, payload: BODY });
  assert.equal(zero.statusCode, 400, zero.body);
  assert.equal(zero.json<Envelope>().error.code, 'joule_ceiling_too_low');
  const huge = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { ...auth(a.secret), 'x-svc-max-joules': '999999999999999' }, payload: BODY });
  assert.equal(huge.statusCode, 200, huge.body);
  assert.equal(f.upstream.requests.length, 1);
});
