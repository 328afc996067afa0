import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestHostedApp, FREE_PLAN, signIn } from '../../helpers/hosted-app-fixture.ts';

interface Envelope { error: { message: string; type: string; code: string; docs_url: string } }

test('GET of a sign-in link only shows a page: the token is not spent until the POST', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const account = await store.createAccount({ name: 'a', plan: FREE_PLAN });
  const { token } = await store.createSignInToken(account.id, 60_000);
  for (let i = 0; i < 3; i++) {
    const page = await app.inject({ url: `/api/session/sign-in?token=${token}` });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<button id="sign-in"/);
    assert.doesNotMatch(page.body, new RegExp(token), 'the page does not echo the token');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
    assert.equal(page.headers['set-cookie'], undefined);
  }
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { token } });
  assert.equal(res.statusCode, 200);
  const body = res.json<{ session_token: string; expires_at: string }>();
  assert.match(body.session_token, /^svc_ses_[A-Za-z0-9_-]{43}$/);
  assert.ok(Date.parse(body.expires_at) > Date.now() + 6 * 24 * 3600_000, 'sessions last a week by default');
  const setCookie = String(res.headers['set-cookie']);
  assert.match(setCookie, /^svc_session=svc_ses_[A-Za-z0-9_-]{43};/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.match(setCookie, /Path=\//);
  assert.doesNotMatch(setCookie, /Secure/, 'plain HTTP without the option: no Secure flag');

  const again = await app.inject({ method: 'POST', url: '/api/session', payload: { token } });
  assert.equal(again.statusCode, 401);
  const e = again.json<Envelope>();
  assert.equal(e.error.code, 'sign_in_link_invalid');
  assert.equal(e.error.docs_url, '/docs/hosted#sign_in_link_invalid');
});

test('the cookie is Secure when an option says so (TLS ends at a proxy)', async (t) => {
  const { app, store } = await buildTestHostedApp(t, { secureCookies: true });
  const account = await store.createAccount({ name: 'a', plan: FREE_PLAN });
  const { token } = await store.createSignInToken(account.id, 60_000);
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { token } });
  assert.match(String(res.headers['set-cookie']), /; Secure/);
});

test('POST /api/session refuses bad bodies, non-JSON and other origins with the envelope', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const account = await store.createAccount({ name: 'a', plan: FREE_PLAN });
  const { token } = await store.createSignInToken(account.id, 60_000);
  const cases: { payload?: string; headers: Record<string, string>; status: number; code: string }[] = [
    { payload: JSON.stringify({ token, extra: 1 }), headers: { 'content-type': 'application/json' }, status: 400, code: 'invalid_request' },
    { payload: JSON.stringify({}), headers: { 'content-type': 'application/json' }, status: 400, code: 'invalid_request' },
    { payload: JSON.stringify({ token: 42 }), headers: { 'content-type': 'application/json' }, status: 400, code: 'invalid_request' },
    { payload: `token=${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type' },
    { payload: JSON.stringify({ token }), headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type' },
    { payload: JSON.stringify({ token }), headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, status: 403, code: 'cross_origin_request_refused' },
    { payload: JSON.stringify({ token }), headers: { 'content-type': 'application/json', origin: 'null' }, status: 403, code: 'cross_origin_request_refused' },
    { payload: JSON.stringify({ token: 'garbage' }), headers: { 'content-type': 'application/json' }, status: 401, code: 'sign_in_link_invalid' },
  ];
  for (const c of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/session', ...(c.payload !== undefined ? { payload: c.payload } : {}), headers: c.headers });
    assert.equal(res.statusCode, c.status, `${JSON.stringify(c)} → ${res.body}`);
    assert.equal(res.json<Envelope>().error.code, c.code);
  }
  // None of the refusals spent the token; a same-origin request (Origin = this host) redeems it.
  const ok = await app.inject({ method: 'POST', url: '/api/session', payload: { token }, headers: { origin: 'http://svc.example:8080', host: 'SVC.example:8080' } });
  assert.equal(ok.statusCode, 200, ok.body);
});

test('a session works by cookie and by bearer token; an API key is not a session; sign-out ends it', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  assert.equal((await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } })).statusCode, 200);
  assert.equal((await app.inject({ url: '/api/keys', headers: { authorization: `Bearer ${me.sessionToken}` } })).statusCode, 200);

  const none = await app.inject({ url: '/api/keys' });
  assert.equal(none.statusCode, 401);
  assert.equal(none.json<Envelope>().error.code, 'session_required');

  const { secret } = await store.issueKey(me.account.id, { scope: 'developer_runtime' });
  const withKey = await app.inject({ url: '/api/keys', headers: { authorization: `Bearer ${secret}` } });
  assert.equal(withKey.statusCode, 401);
  assert.equal(withKey.json<Envelope>().error.code, 'session_required');
  assert.match(withKey.json<Envelope>().error.message, /API keys cannot manage keys/);

  const forged = await app.inject({ url: '/api/keys', headers: { cookie: 'svc_session=svc_ses_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
  assert.equal(forged.statusCode, 401);

  const out = await app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: me.cookie, 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(out.statusCode, 200, out.body);
  assert.match(String(out.headers['set-cookie']), /^svc_session=;.*Expires=Thu, 01 Jan 1970/);
  assert.equal((await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } })).statusCode, 401);
  assert.equal((await app.inject({ url: '/api/keys', headers: { authorization: `Bearer ${me.sessionToken}` } })).statusCode, 401);
  // Signing out again (or with nothing) is not an error.
  assert.equal((await app.inject({ method: 'DELETE', url: '/api/session' })).statusCode, 200);
});

test('cookie-borne mutations must be JSON and same-origin; bearer ones are not CSRF-able and need neither', async (t) => {
  const { app, store } = await buildTestHostedApp(t);
  const me = await signIn(app, store);
  const form = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'scope=developer_runtime' });
  assert.equal(form.statusCode, 415);
  const cross = await app.inject({ method: 'POST', url: '/api/keys', headers: { cookie: me.cookie, origin: 'https://evil.example' }, payload: { scope: 'developer_runtime' } });
  assert.equal(cross.statusCode, 403);
  assert.equal(cross.json<Envelope>().error.code, 'cross_origin_request_refused');
  // A DELETE without a body needs no type (no form can send a DELETE); one with a body that is not JSON does.
  const bodiless = await app.inject({ method: 'DELETE', url: '/api/keys?id=key_x', headers: { cookie: me.cookie } });
  assert.equal(bodiless.statusCode, 404, 'the bodiless cookie request reaches the route');
  const textBody = await app.inject({ method: 'DELETE', url: '/api/keys?id=key_x', headers: { cookie: me.cookie, 'content-type': 'text/plain' }, payload: '{"id":"key_x"}' });
  assert.equal(textBody.statusCode, 415);
  const chunked = await app.inject({ method: 'DELETE', url: '/api/keys?id=key_x', headers: { cookie: me.cookie, 'transfer-encoding': 'chunked' }, payload: 'x' });
  assert.equal(chunked.statusCode, 415, 'a chunked body with no type is a body');
  const signOutCross = await app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: me.cookie, origin: 'https://evil.example', 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(signOutCross.statusCode, 403);
  assert.equal((await store.listKeys(me.account.id)).length, 0, 'nothing refused was done');

  const bearer = await app.inject({ method: 'DELETE', url: '/api/keys?id=key_x', headers: { authorization: `Bearer ${me.sessionToken}` } });
  assert.equal(bearer.statusCode, 404, 'the bearer request reaches the route');
});

test('behind a proxy that rewrites Host, --public-origin names the site: its origin passes the CSRF check, the internal Host does not', async (t) => {
  const { app, store } = await buildTestHostedApp(t, { publicOrigins: ['https://svc.example.com'] });
  const me = await signIn(app, store);
  const internal = { host: '127.0.0.1:11450' };
  const fromSite = await app.inject({ method: 'POST', url: '/api/keys', headers: { ...internal, cookie: me.cookie, origin: 'https://svc.example.com' }, payload: { scope: 'developer_runtime' } });
  assert.equal(fromSite.statusCode, 201, fromSite.body);
  const fromHost = await app.inject({ method: 'POST', url: '/api/keys', headers: { ...internal, cookie: me.cookie, origin: 'http://127.0.0.1:11450' }, payload: { scope: 'developer_runtime' } });
  assert.equal(fromHost.statusCode, 403);
  assert.equal(fromHost.json<Envelope>().error.code, 'cross_origin_request_refused');
  const otherScheme = await app.inject({ method: 'POST', url: '/api/keys', headers: { ...internal, cookie: me.cookie, origin: 'http://svc.example.com' }, payload: { scope: 'developer_runtime' } });
  assert.equal(otherScheme.statusCode, 403, 'the configured origin is exact, scheme included');
});
