/**
 * GET /api/v1/usage for a signed-in session (the console's usage page reads it in the browser
 * with the session cookie): the whole account, per key and per project, the newest evidence
 * with its svc_route; the key rules unchanged beside it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryRateLimiter } from '../../../src/accounts/limits/memory-rate-limiter.ts';
import { buildChatFixture } from '../../helpers/hosted-chat-fixture.ts';
import { FREE_PLAN, PAID_PLAN, signIn } from '../../helpers/hosted-app-fixture.ts';

const BODY = { model: 'svc-chat-small', messages: [{ role: 'user', content: 'Say hello' }] };

interface Envelope { error: { code: string; type: string; message: string } }
interface SessionReport {
  joules_used: number; joules_remaining: number; joules_allowance: number;
  daily: { date: string; joules: number; requests: number; prompt_tokens: number; completion_tokens: number }[];
  key: null;
  keys: { key_id: string; requests: number; joules: number; prompt_tokens: number; completion_tokens: number }[];
  keys_truncated: boolean;
  projects: { project_id: string; requests: number; joules: number; prompt_tokens: number; completion_tokens: number }[];
  recent_evidence: ({ evidence_id: string; created_at: string; key_id: string; project_id: string | null; joules: number; route: Record<string, unknown> } & Record<string, unknown>)[];
  source_descriptor: { scope: { account_id: string; key_id: null; key_ids: string[]; via: string; project_ids: string[] }; ledger_keys: string[] };
  not_exposed: string[];
}

test('a signed-in session reads its account\'s usage: every key, every project, the newest evidence, equal to the ledger', async (t) => {
  const f = await buildChatFixture(t);
  const me = await signIn(f.app, f.store, PAID_PLAN, 'me');
  const first = await f.store.issueKey(me.account.id, { scope: 'supercomputer', name: 'first' });
  const second = await f.store.issueKey(me.account.id, { scope: 'supercomputer', name: 'second' });
  const evidence: string[] = [];
  for (const [secret, project] of [[first.secret, 'web'], [first.secret, null], [second.secret, 'web']] as const) {
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${secret}`, ...(project === null ? {} : { 'x-svc-project-id': project }) }, payload: BODY });
    assert.equal(res.statusCode, 200, res.body);
    evidence.push(String(res.headers['x-svc-evidence-id']));
  }
  // Someone else's usage stays out.
  const other = await f.account();
  const othersChat = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${other.secret}` }, payload: BODY });
  assert.equal(othersChat.statusCode, 200, `the other account's chat must be billed for "stays out" to mean anything: ${othersChat.body}`);

  const byCookie = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: me.cookie } });
  assert.equal(byCookie.statusCode, 200, byCookie.body);
  assert.equal(byCookie.headers['cache-control'], 'no-store');
  const u = byCookie.json<SessionReport>();
  const month = (await f.store.allowance(me.account.id)).month;
  const ledger = await f.store.ledgerTotal(me.account.id, month);
  assert.equal(u.joules_used, ledger.joules);
  assert.equal(u.joules_used, 3.3, '3 chats × 1.1 J');
  assert.equal(u.joules_allowance, PAID_PLAN.monthlyJouleAllowance);
  assert.equal(u.joules_remaining, PAID_PLAN.monthlyJouleAllowance - 3.3);
  assert.equal(u.key, null, 'a session has no key of its own');
  assert.deepEqual(u.keys.map((k) => [k.key_id, k.requests, k.joules]), [[first.key.id, 2, 2.2], [second.key.id, 1, 1.1]]);
  assert.equal(u.keys_truncated, false);
  assert.deepEqual(u.projects.map((p) => [p.project_id, p.requests, p.joules]), [['web', 2, 2.2]]);
  // Tokens beside requests and Joules, per day, key and project: the ledger rows' own counts.
  const rows = await Promise.all(evidence.map((id) => f.store.findEvidence(me.account.id, id)));
  const tokens = (pick: (i: number) => boolean): [number, number] => rows.reduce<[number, number]>(([p, c], r, i) => pick(i) ? [p + r!.promptTokens, c + r!.completionTokens] : [p, c], [0, 0]);
  assert.ok(tokens(() => true)[0] > 0 && tokens(() => true)[1] > 0, 'the chats used tokens');
  assert.deepEqual(u.daily.map((d) => [d.requests, d.prompt_tokens, d.completion_tokens]), [[3, ...tokens(() => true)]]);
  assert.deepEqual(u.keys.map((k) => [k.prompt_tokens, k.completion_tokens]), [tokens((i) => i < 2), tokens((i) => i === 2)]);
  assert.deepEqual(u.projects.map((p) => [p.prompt_tokens, p.completion_tokens]), [tokens((i) => i !== 1)]);
  // The per-row billing facts are not in usage: the session reads them from the evidence route.
  const one = await f.app.inject({ url: `/api/v1/evidence/${evidence[2]}`, headers: { cookie: me.cookie } });
  assert.equal(one.statusCode, 200, one.body);
  const record = one.json<{ outcome: string; prompt_tokens: number; completion_tokens: number; svc_route: { estimated_joules: number } }>();
  assert.deepEqual([record.outcome, record.prompt_tokens, record.completion_tokens, record.svc_route.estimated_joules], [rows[2]!.outcome, rows[2]!.promptTokens, rows[2]!.completionTokens, rows[2]!.route.estimated_joules]);
  const othersEvidence = await f.app.inject({ url: `/api/v1/evidence/${othersChat.headers['x-svc-evidence-id']}`, headers: { cookie: me.cookie } });
  assert.equal(othersEvidence.statusCode, 404, 'another account\'s evidence is not found for this session');
  assert.deepEqual(u.recent_evidence.map((e) => e.evidence_id), [...evidence].reverse(), 'newest first, this account only');
  const newest = u.recent_evidence[0]!;
  assert.deepEqual([newest.key_id, newest.project_id, newest.joules], [second.key.id, 'web', 1.1]);
  // Evidence ids and Joules, and the route's non-billing facts: nothing of a billing event
  // (the contract's "usage does not expose: route-evidence-linked billing events").
  const recorded = await f.store.findEvidence(me.account.id, newest.evidence_id);
  assert.equal(newest.created_at, recorded!.createdAt.toISOString());
  assert.deepEqual(Object.keys(newest).sort(), ['created_at', 'evidence_id', 'joules', 'key_id', 'project_id', 'route']);
  assert.deepEqual(newest.route, {
    policy: recorded!.route.policy, execution_plane: recorded!.route.execution_plane, privacy_tier: recorded!.route.privacy_tier,
    model: recorded!.route.model, provider: recorded!.route.provider, latency_ms: recorded!.route.latency_ms,
    fallback: recorded!.route.fallback, fallback_reason: recorded!.route.fallback_reason,
  });
  assert.ok(u.not_exposed.includes('route-evidence-linked billing events'));
  assert.deepEqual(u.source_descriptor.scope, { account_id: me.account.id, key_id: null, key_ids: [first.key.id, second.key.id], via: 'session', project_ids: ['web'] });
  assert.ok(u.source_descriptor.ledger_keys.includes(`ledger:account_id=${me.account.id}:key_id=${second.key.id}:month=${month}`));

  // The session token as a bearer reads the same report.
  const byBearer = await f.app.inject({ url: '/api/v1/usage', headers: { authorization: `Bearer ${me.sessionToken}` } });
  assert.equal(byBearer.statusCode, 200);
  assert.deepEqual(byBearer.json<SessionReport>().keys, u.keys);

  // A key's report is unchanged: its own key, no account-wide extras.
  const byKey = await f.app.inject({ url: '/api/v1/usage', headers: { authorization: `Bearer ${first.secret}` } });
  const keyReport = byKey.json<Record<string, unknown> & { key: { key_id: string; requests: number } }>();
  assert.deepEqual([keyReport.key.key_id, keyReport.key.requests], [first.key.id, 2]);
  assert.equal('keys' in keyReport || 'recent_evidence' in keyReport, false);
});

test('session access keeps the key rules: Authorization decides first, no entitlement is 402, a dead session 401, fleet /v1 keys only', async (t) => {
  const f = await buildChatFixture(t, { enterprise: true });
  const me = await signIn(f.app, f.store, { ...PAID_PLAN, enterprise: true }, 'me');
  const code = (res: { json: <T>() => T }) => res.json<Envelope>().error.code;

  // A wrong API key beside a good cookie is a wrong key, not a session.
  const wrongKey = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: me.cookie, authorization: 'Bearer svc_sk_not-a-key' } });
  assert.deepEqual([wrongKey.statusCode, code(wrongKey)], [401, 'svc_api_key_required']);
  const nothing = await f.app.inject({ url: '/api/v1/usage' });
  assert.deepEqual([nothing.statusCode, code(nothing)], [401, 'svc_api_key_required']);
  assert.match(nothing.json<Envelope>().error.message, /sign in/);
  // A stale or made-up cookie with no Authorization is a request without a valid key (the
  // contract's code for /v1/usage); its message says to sign in again.
  const stale = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: 'svc_session=svc_ses_expired-or-made-up' } });
  assert.deepEqual([stale.statusCode, code(stale), stale.json<Envelope>().error.type], [401, 'svc_api_key_required', 'authentication_error']);
  assert.match(stale.json<Envelope>().error.message, /sign in again/i);
  // Only an explicit session bearer that is not live is told so.
  const staleBearer = await f.app.inject({ url: '/api/v1/usage', headers: { authorization: 'Bearer svc_ses_expired-or-made-up' } });
  assert.deepEqual([staleBearer.statusCode, code(staleBearer)], [401, 'session_required']);

  // Signed out, the cookie no longer reads anything.
  await f.app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: me.cookie, 'content-type': 'application/json' }, payload: {} });
  const signedOut = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: me.cookie } });
  assert.deepEqual([signedOut.statusCode, code(signedOut)], [401, 'svc_api_key_required']);
  const signedOutBearer = await f.app.inject({ url: '/api/v1/usage', headers: { authorization: `Bearer ${me.sessionToken}` } });
  assert.deepEqual([signedOutBearer.statusCode, code(signedOutBearer)], [401, 'session_required']);

  // An account without hosted compute gets the entitlement answer, as its keys would.
  const free = await signIn(f.app, f.store, FREE_PLAN, 'free');
  const unentitled = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: free.cookie } });
  assert.deepEqual([unentitled.statusCode, code(unentitled)], [402, 'insufficient_quota']);

  // The enterprise fleet prefix stays enterprise keys only.
  const ent = await signIn(f.app, f.store, { ...PAID_PLAN, enterprise: true }, 'ent');
  const fleet = await f.app.inject({ url: '/v1/usage', headers: { cookie: ent.cookie } });
  assert.deepEqual([fleet.statusCode, code(fleet)], [401, 'svc_api_key_required']);
  assert.equal((await f.app.inject({ url: '/api/v1/usage', headers: { cookie: ent.cookie } })).statusCode, 200);
});

test('a session takes from the backstop limiter in a bucket of its own', async (t) => {
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.001, burst: 1 } } });
  t.after(() => limiter.close());
  const f = await buildChatFixture(t, { limiter });
  const me = await signIn(f.app, f.store, PAID_PLAN, 'me');
  assert.equal((await f.app.inject({ url: '/api/v1/usage', headers: { cookie: me.cookie } })).statusCode, 200);
  const limited = await f.app.inject({ url: '/api/v1/usage', headers: { cookie: me.cookie } });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.json<Envelope>().error.code, 'rate_limit_exceeded');
  // Another session's bucket is its own.
  const you = await signIn(f.app, f.store, PAID_PLAN, 'you');
  assert.equal((await f.app.inject({ url: '/api/v1/usage', headers: { cookie: you.cookie } })).statusCode, 200);
});
