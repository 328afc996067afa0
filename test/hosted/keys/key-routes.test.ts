import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { buildTestHostedApp, PAID_PLAN, signIn } from '../../helpers/hosted-app-fixture.ts';

interface Envelope { error: { message: string; type: string; code: string; docs_url: string } }
interface KeyBody { id: string; object: string; scope: string; name: string | null; project: string | null; prefix: string; last_four: string; created_at: string; last_used_at: string | null; revoked_at: string | null; secret?: string }

const json = { 'content-type': 'application/json' };

test('POST /api/keys issues a key whose secret is shown once; GET lists metadata only', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  const res = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime', name: 'laptop', project: 'proj-1' } });
  assert.equal(res.statusCode, 201, res.body);
  const key = res.json<KeyBody>();
  assert.match(key.secret!, /^svc_dk_[A-Za-z0-9_-]{43}$/);
  assert.equal(key.prefix, key.secret!.slice(0, 12));
  assert.equal(key.last_four, key.secret!.slice(-4));
  assert.deepEqual([key.scope, key.name, key.project, key.revoked_at], ['developer_runtime', 'laptop', 'proj-1', null]);
  assert.ok(Math.abs(Date.parse(key.created_at) - Date.now()) < 60_000);

  const minimal = await app.inject({ method: 'POST', url: '/api/keys', headers: { authorization: `Bearer ${me.sessionToken}` }, payload: { scope: 'developer_runtime' } });
  assert.equal(minimal.statusCode, 201);
  assert.equal(minimal.json<KeyBody>().name, null);

  const list = await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } });
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['cache-control'], 'no-store');
  assert.doesNotMatch(list.body, new RegExp(key.secret!.slice(12, -4)), 'no secret in the listing');
  const data = list.json<{ data: KeyBody[] }>().data;
  assert.deepEqual(data.map((k) => k.id), [key.id, minimal.json<KeyBody>().id]);
  assert.ok(data.every((k) => !Object.hasOwn(k, 'secret')));
  assert.deepEqual(Object.keys(data[0]!).sort(), ['created_at', 'id', 'last_four', 'last_used_at', 'name', 'object', 'prefix', 'project', 'revoked_at', 'scope']);
});

test('supercomputer keys need the hosted entitlement (402 hosted_entitlement_required)', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const free = await signIn(app, store);
  const refused = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: free.cookie }, payload: { scope: 'supercomputer' } });
  assert.equal(refused.statusCode, 402);
  assert.deepEqual(refused.json<Envelope>().error, { ...refused.json<Envelope>().error, type: 'insufficient_quota', code: 'hosted_entitlement_required', docs_url: '/docs/hosted#hosted_entitlement_required' });
  assert.equal((await store.listKeys(free.account.id)).length, 0);

  // The plan is read per request: granting the entitlement takes effect without signing in again.
  await store.setPlan(free.account.id, { hostedEntitlement: true });
  const granted = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: free.cookie }, payload: { scope: 'supercomputer' } });
  assert.equal(granted.statusCode, 201);
  assert.match(granted.json<KeyBody>().secret!, /^svc_sk_/);
});

test('bodies are strict: unknown fields, bad scopes, long names and bad project ids are 400s', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  const bad: unknown[] = [
    { scope: 'developer_runtime', extra: true },
    { scope: 'root' },
    {},
    { scope: 'developer_runtime', name: 'x'.repeat(101) },
    { scope: 'developer_runtime', name: '' },
    { scope: 'developer_runtime', name: 7 },
    { scope: 'developer_runtime', project: 'has space' },
    { scope: 'developer_runtime', project: 'p'.repeat(129) },
    { scope: 'developer_runtime', project: 'naïve' },
    [],
    'developer_runtime',
    null,
  ];
  for (const payload of bad) {
    const res = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie, ...json }, payload: JSON.stringify(payload) });
    assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
    assert.equal(res.json<Envelope>().error.code, 'invalid_request');
  }
  const okName = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime', name: 'x'.repeat(100), project: 'p'.repeat(128) } });
  assert.equal(okName.statusCode, 201);
  assert.equal((await store.listKeys(me.account.id)).length, 1);
});

test('no account can see, use or revoke another account\'s keys', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const alice = await signIn(app, store, PAID_PLAN, 'alice');
  const bob = await signIn(app, store, PAID_PLAN, 'bob');
  const aliceKey = (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: alice.cookie }, payload: { scope: 'supercomputer', name: 'alice-key' } })).json<KeyBody>();
  const bobKey = (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: bob.cookie }, payload: { scope: 'developer_runtime', name: 'bob-key' } })).json<KeyBody>();

  const bobList = (await app.inject({ url: '/api/keys', headers: { cookie: bob.cookie } })).json<{ data: KeyBody[] }>().data;
  assert.deepEqual(bobList.map((k) => k.id), [bobKey.id]);

  const steal = await app.inject({ method: 'DELETE', url: '/api/keys', headers: { cookie: bob.cookie }, payload: { id: aliceKey.id } });
  assert.equal(steal.statusCode, 404);
  const unknown = await app.inject({ method: 'DELETE', url: '/api/keys', headers: { cookie: bob.cookie }, payload: { id: 'key_doesnotexist' } });
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(steal.json(), unknown.json(), 'another account\'s key and no key answer identically');
  assert.equal(steal.json<Envelope>().error.code, 'api_key_not_found');

  // Bob's session with Alice's key id in the query: still 404, and Alice's key still works.
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/keys?id=${aliceKey.id}`, headers: { authorization: `Bearer ${bob.sessionToken}` } })).statusCode, 404);
  const check = await store.checkKey(aliceKey.secret!);
  assert.equal(check.status, 'valid');
  assert.equal(check.status === 'valid' ? check.account.id : '', alice.account.id);
  // Bob cannot use Alice's session either way round: a session only ever lists its own account's keys.
  const aliceList = (await app.inject({ url: '/api/keys', headers: { authorization: `Bearer ${alice.sessionToken}` } })).json<{ data: KeyBody[] }>().data;
  assert.deepEqual(aliceList.map((k) => k.id), [aliceKey.id]);
});

test('DELETE /api/keys revokes by body or ?id=, idempotently; the revoked key then gets svc_api_key_revoked', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store, PAID_PLAN);
  const a = (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'supercomputer' } })).json<KeyBody>();
  const b = (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime' } })).json<KeyBody>();
  const rag = { data_boundary: 'account_private', sources: [{ kind: 'public', uri: 'https://example.com' }] };
  const before = await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${a.secret!}` }, payload: rag });
  assert.notEqual(before.statusCode, 401, before.body);

  const revoked = await app.inject({ method: 'DELETE', url: '/api/keys', headers: { cookie: me.cookie }, payload: { id: a.id } });
  assert.equal(revoked.statusCode, 200, revoked.body);
  const body = revoked.json<KeyBody>();
  assert.equal(body.id, a.id);
  assert.ok(body.revoked_at !== null);
  assert.equal(Object.hasOwn(body, 'secret'), false);
  const again = await app.inject({ method: 'DELETE', url: `/api/keys?id=${a.id}`, headers: { authorization: `Bearer ${me.sessionToken}` } });
  assert.equal(again.statusCode, 200, 'revoking twice is not an error');
  assert.equal(again.json<KeyBody>().revoked_at, body.revoked_at, 'and keeps the first revocation time');

  const after = await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${a.secret!}` }, payload: rag });
  assert.equal(after.statusCode, 401);
  assert.equal(after.json<Envelope>().error.code, 'svc_api_key_revoked');
  assert.equal(after.json<Envelope>().error.type, 'authentication_error');

  const differ = await app.inject({ method: 'DELETE', url: `/api/keys?id=${b.id}`, headers: { cookie: me.cookie }, payload: { id: a.id } });
  assert.equal(differ.statusCode, 400);
  const neither = await app.inject({ method: 'DELETE', url: '/api/keys', headers: { cookie: me.cookie }, payload: {} });
  assert.equal(neither.statusCode, 400);
  const extraQuery = await app.inject({ method: 'DELETE', url: `/api/keys?id=${b.id}&all=1`, headers: { authorization: `Bearer ${me.sessionToken}` } });
  assert.equal(extraQuery.statusCode, 400);
  const list = (await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } })).json<{ data: KeyBody[] }>().data;
  assert.deepEqual(list.map((k) => [k.id, k.revoked_at !== null]), [[a.id, true], [b.id, false]]);
});

test('no secret (key or session) reaches the log', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done(); } });
  const logger = pino({ level: 'trace' }, sink);
  const { app, store } = await buildTestHostedApp(t, { logger });
  const me = await signIn(app, store);
  const issued = (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime' } })).json<KeyBody>();
  await app.inject({ url: '/api/keys', headers: { authorization: `Bearer ${me.sessionToken}` } });
  await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${issued.secret!}` }, payload: {} });
  await app.inject({ method: 'DELETE', url: '/api/keys', headers: { cookie: me.cookie }, payload: { id: issued.id } });
  const { token } = await store.createSignInToken(me.account.id, 60_000);
  await app.inject({ url: `/api/session/sign-in?token=${token}` });
  const log = lines.join('');
  assert.ok(lines.length >= 5, 'requests were logged');
  assert.match(log, /\/api\/keys/);
  for (const secret of [issued.secret!, me.sessionToken, token, me.sessionToken.slice(8)]) assert.ok(!log.includes(secret), 'a secret was logged');
});

test('POST /api/keys past the plan\'s cap on active keys is 409 key_limit_reached; revoking one frees a place', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  const post = () => app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime' } });
  // A free account's default cap.
  const issued: KeyBody[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await post();
    assert.equal(res.statusCode, 201, res.body);
    issued.push(res.json<KeyBody>());
  }
  const refused = await post();
  assert.equal(refused.statusCode, 409, refused.body);
  const { error } = refused.json<Envelope>();
  assert.deepEqual([error.type, error.code, error.docs_url], ['invalid_request_error', 'key_limit_reached', '/docs/hosted#key_limit_reached']);
  assert.match(error.message, /10 active keys/);
  assert.equal((await store.listKeys(me.account.id)).length, 10, 'nothing was issued');

  assert.equal((await app.inject({ method: 'DELETE', url: `/api/keys?id=${issued[0]!.id}`, headers: { cookie: me.cookie } })).statusCode, 200);
  assert.equal((await post()).statusCode, 201, 'a revoked key does not count');
  assert.equal((await post()).statusCode, 409);

  // The operator's plan setting counts at once.
  await store.setPlan(me.account.id, { maxActiveKeys: 11 });
  assert.equal((await post()).statusCode, 201);
  assert.equal((await post()).statusCode, 409);
});

test('concurrent POST /api/keys never pass the cap together', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  await store.setPlan(me.account.id, { maxActiveKeys: 3 });
  const results = await Promise.all(Array.from({ length: 20 }, () =>
    app.inject({ method: 'POST', url: '/api/keys', headers: { authorization: `Bearer ${me.sessionToken}` }, payload: { scope: 'developer_runtime' } })));
  assert.deepEqual(results.map((r) => r.statusCode).sort(), [...Array<number>(3).fill(201), ...Array<number>(17).fill(409)]);
  assert.equal((await store.listKeys(me.account.id)).length, 3);
});

test('a query-only DELETE /api/keys?id= works from the key page\'s session: no body, with or without a JSON content type', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  const issue = async () => (await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie }, payload: { scope: 'developer_runtime' } })).json<KeyBody>();
  const cases: { what: string; headers: Record<string, string>; payload?: string }[] = [
    { what: 'cookie, no content type, no body', headers: { cookie: me.cookie } },
    { what: 'cookie, JSON content type, empty body', headers: { cookie: me.cookie, ...json }, payload: '' },
    { what: 'cookie, JSON content type with charset, empty body, same origin', headers: { cookie: me.cookie, 'content-type': 'application/json; charset=utf-8', origin: 'http://svc.example:8080', host: 'svc.example:8080' }, payload: '' },
    { what: 'bearer session, JSON content type, empty body', headers: { authorization: `Bearer ${me.sessionToken}`, ...json }, payload: '' },
    { what: 'bearer session, no content type, no body', headers: { authorization: `Bearer ${me.sessionToken}` } },
  ];
  for (const c of cases) {
    const key = await issue();
    const res = await app.inject({ method: 'DELETE', url: `/api/keys?id=${key.id}`, headers: c.headers, ...(c.payload === undefined ? {} : { payload: c.payload }) });
    assert.equal(res.statusCode, 200, `${c.what}: ${res.body}`);
    assert.equal(res.json<KeyBody>().id, key.id);
    assert.ok(res.json<KeyBody>().revoked_at !== null, c.what);
  }

  // What stays refused: a body that is not JSON, malformed JSON, another origin, and a key that is not listed.
  const live = await issue();
  const notJson = await app.inject({ method: 'DELETE', url: `/api/keys?id=${live.id}`, headers: { cookie: me.cookie, 'content-type': 'text/plain' }, payload: 'x' });
  assert.equal(notJson.statusCode, 415);
  const malformed = await app.inject({ method: 'DELETE', url: `/api/keys?id=${live.id}`, headers: { cookie: me.cookie, ...json }, payload: '{' });
  assert.equal(malformed.statusCode, 400);
  assert.equal(malformed.json<Envelope>().error.code, 'invalid_json');
  const cross = await app.inject({ method: 'DELETE', url: `/api/keys?id=${live.id}`, headers: { cookie: me.cookie, origin: 'https://evil.example' } });
  assert.equal(cross.statusCode, 403);
  assert.equal(cross.json<Envelope>().error.code, 'cross_origin_request_refused');
  const tooBig = await app.inject({ method: 'DELETE', url: `/api/keys?id=${live.id}`, headers: { cookie: me.cookie, ...json }, payload: JSON.stringify({ id: live.id, pad: 'x'.repeat(100_000) }) });
  assert.equal(tooBig.statusCode, 413);
  assert.equal((await store.listKeys(me.account.id)).find((k) => k.id === live.id)?.revokedAt, null, 'nothing refused was done');
  const missing = await app.inject({ method: 'DELETE', url: '/api/keys?id=key_nope', headers: { cookie: me.cookie } });
  assert.equal(missing.statusCode, 404);

  // Signing out the same way: a JSON content type with no body is no body.
  const out = await app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: me.cookie, ...json }, payload: '' });
  assert.equal(out.statusCode, 200, out.body);
  assert.equal(await store.checkSession(me.sessionToken), undefined);
});

test('the key routes take from the limiter too: a signed-in session has a bucket, shared with its account', async (t) => {
  const { MemoryRateLimiter } = await import('../../../src/accounts/limits/memory-rate-limiter.ts');
  const limiter = new MemoryRateLimiter({ limits: { key: { requests_per_second: 0.01, burst: 2 } } });
  const { app, store } = await buildTestHostedApp(t, { limiter });
  const signed = await signIn(app, store, PAID_PLAN);
  const list = () => app.inject({ method: 'GET', url: '/api/keys', headers: { authorization: `Bearer ${signed.sessionToken}` } });
  assert.equal((await list()).statusCode, 200);
  assert.equal((await list()).statusCode, 200);
  const limited = await list();
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.json<{ error: { type: string } }>().error.type, 'rate_limit_error');
});
