import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { HostedAppOptions } from '../../src/hosted/hosted-app.ts';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import { HOSTED_ERROR_CODES } from '../../src/hosted/hosted-error.ts';
import { SVC_ROUTE_FIELDS } from '../../src/hosted/descriptors.ts';
import { SVC_VERSION } from '../../src/shared/version.ts';
import { testRouteConfig } from '../helpers/hosted-route-config.ts';
import { buildTestHostedApp } from '../helpers/hosted-app-fixture.ts';

interface Envelope { error: { message: string; type: string; code: string; docs_url: string; retry_after_seconds?: number } }

/** The app on the real embedded store (SQLite in a temporary data dir). */
async function build(t: TestContext, options: Partial<HostedAppOptions> = {}): Promise<{ app: FastifyInstance; store: HostedStore }> {
  const { app, store } = await buildTestHostedApp(t, options);
  return { app, store };
}

/** The hosted envelope, exactly its four fields (plus retry_after_seconds on 429). */
function assertEnvelope(body: unknown, code: string, type: string): Envelope {
  const e = body as Envelope;
  assert.equal(e.error.code, code);
  assert.equal(e.error.type, type);
  assert.equal(typeof e.error.message, 'string');
  assert.ok(e.error.message.length > 0);
  assert.equal(e.error.docs_url, `/docs/hosted#${code}`);
  assert.deepEqual(Object.keys(e.error).filter((k) => k !== 'retry_after_seconds').sort(), ['code', 'docs_url', 'message', 'type']);
  return e;
}

test('GET /api/v1/health reports hosted reachability only, not cached', async (t) => {
  const { app } = await build(t);
  const res = await app.inject({ method: 'GET', url: '/api/v1/health' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json<{ status: string; scope: string; not_claimed: string[] }>();
  assert.equal(body.status, 'ok');
  assert.equal(body.scope, 'hosted_reachability');
  assert.match(body.not_claimed.join(' '), /does not prove that a developer's local runtime is healthy/);
});

test('descriptors are built from the live route config, with the contract non-claims', async (t) => {
  const routes = testRouteConfig();
  const { app } = await build(t, { routes });
  const models = (await app.inject({ url: '/api/v1/models' })).json<{ data: { id: string; policies: string[] }[]; route_families: string[]; not_claimed: string[] }>();
  assert.deepEqual(models.data.map((m) => m.id), ['svc-chat-small', 'svc-chat-large']);
  assert.deepEqual(models.data[0]!.policies.sort(), ['enterprise-private', 'supercomputer-deep', 'supercomputer-fast']);
  assert.deepEqual(models.data[1]!.policies.sort(), ['supercomputer-deep', 'supercomputer-fast']);
  assert.deepEqual(models.route_families, ['chat']);
  assert.match(models.not_claimed.join(' '), /not every underlying weight file/);

  const r = await app.inject({ url: '/api/v1/routes' });
  const text = r.body;
  assert.doesNotMatch(text, /10\.0\.0\.7/, 'upstream addresses stay private');
  assert.doesNotMatch(text, /internal\/small-q4/, 'backend-side model names stay private');
  const routesBody = r.json<{ default_policy: string; routes: { policy: string; queue_class: string; backends: { id: string }[] }[] }>();
  assert.equal(routesBody.default_policy, 'supercomputer-fast');
  assert.deepEqual(routesBody.routes.map((x) => [x.policy, x.queue_class, x.backends.map((b) => b.id)]), [
    ['supercomputer-fast', 'interactive', ['pool-a', 'local-engine']],
    ['supercomputer-deep', 'deep', ['pool-a']],
    ['enterprise-private', 'enterprise', ['local-engine']],
  ]);

  const capacity = (await app.inject({ url: '/api/v1/capacity' })).json<{ queue_classes: { name: string; policies: string[] }[]; live_queue_depth: null; not_claimed: string[] }>();
  assert.deepEqual(capacity.queue_classes.map((q) => [q.name, q.policies]), [['interactive', ['supercomputer-fast']], ['deep', ['supercomputer-deep']], ['enterprise', ['enterprise-private']]]);
  assert.equal(capacity.live_queue_depth, null);
  assert.deepEqual(capacity.not_claimed, ['live queue depth', 'async hosted job queueing', 'reserved public capacity', 'million-user readiness']);

  // A different configuration gives different descriptors: nothing is a second copy.
  routes.routes.pop();
  const after = (await app.inject({ url: '/api/v1/capacity' })).json<{ queue_classes: { name: string; policies: string[] }[] }>();
  assert.deepEqual(after.queue_classes.find((q) => q.name === 'enterprise')!.policies, []);
});

test('GET /api/v1/evidence lists the twelve svc_route fields and key_id with types and the five request headers', async (t) => {
  const { app } = await build(t);
  const body = (await app.inject({ url: '/api/v1/evidence' })).json<{ svc_route: { fields: { name: string; type: string; unit: string | null }[] }; request_headers: { name: string }[] }>();
  assert.deepEqual(body.svc_route.fields.map((f) => f.name), [
    'execution_plane', 'policy', 'privacy_tier', 'model', 'provider', 'latency_ms', 'raw_joules', 'estimated_joules', 'billable_joules', 'fallback', 'fallback_reason', 'key_id', 'evidence_id',
  ]);
  assert.equal(body.svc_route.fields.length, SVC_ROUTE_FIELDS.length);
  assert.equal(body.svc_route.fields.find((f) => f.name === 'latency_ms')!.unit, 'milliseconds');
  assert.equal(body.svc_route.fields.find((f) => f.name === 'raw_joules')!.type, 'number | null');
  assert.deepEqual(body.request_headers.map((h) => h.name), ['x-svc-execution-policy', 'x-svc-privacy-tier', 'x-svc-project-id', 'x-svc-max-joules', 'x-svc-max-latency-ms']);
});

test('GET /api/v1/rag/status lists the retrieval non-claims and does not pretend a bridge answered', async (t) => {
  const { app } = await build(t);
  const body = (await app.inject({ url: '/api/v1/rag/status' })).json<{ reachability: Record<string, string>; not_claimed: string[] }>();
  assert.deepEqual(Object.values(body.reachability), ['not_configured', 'not_configured', 'not_configured']);
  assert.equal(body.not_claimed.length, 6);
  assert.ok(body.not_claimed.includes('reranking'));
  assert.ok(body.not_claimed.includes('shared/global private-memory RAG'));
});

test('GET /api/version: compatibility and structured fields from the build, no-store, nothing invented', async (t) => {
  const commit = 'a'.repeat(40);
  const { app } = await build(t, { build: { version: SVC_VERSION, commit }, release: { downloadUrl: 'https://example.test/dl' } });
  const res = await app.inject({ url: '/api/version' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.deepEqual(res.json(), {
    version: SVC_VERSION, build: `${SVC_VERSION}+${'a'.repeat(12)}`, commit, deployment: 'hosted',
    download_url: 'https://example.test/dl', updater_manifest_url: null, notes: null,
    release: { svc: SVC_VERSION, web: SVC_VERSION, electron: null },
    web: { version: SVC_VERSION }, electron: { version: null, released_at: null },
  });
  const { app: noCommit } = await build(t);
  const body = (await noCommit.inject({ url: '/api/version' })).json<{ commit: null; build: null }>();
  assert.equal(body.commit, null);
  assert.equal(body.build, null);
});

test('POST /api/v1/rag/jobs: key required, boundary rule enforced, then rag_job_runner_not_live', async (t) => {
  const { app, store } = await build(t);
  const account = await store.createAccount({ name: 'a', plan: { monthlyJouleAllowance: 1000, hostedEntitlement: true, enterprise: false } });
  const { secret, key } = await store.issueKey(account.id, { scope: 'supercomputer' });
  const post = (payload: unknown, authorization: string | null = `Bearer ${secret}`) =>
    app.inject({ method: 'POST', url: '/api/v1/rag/jobs', payload: payload as object, headers: authorization === null ? {} : { authorization } });
  const job = { job_class: 'account_or_private_rerank', data_boundary: 'private_supercomputer' };

  const missing = await post(job, null);
  assert.equal(missing.statusCode, 401);
  assert.match(String(missing.headers['www-authenticate']), /^Bearer/);
  assertEnvelope(missing.json(), 'svc_api_key_required', 'authentication_error');
  const unknown = await post(job, 'Bearer svc_sk_nope');
  assert.equal(unknown.statusCode, 401);
  assertEnvelope(unknown.json(), 'svc_api_key_required', 'authentication_error');
  assert.equal((await post(job, 'Basic abc')).statusCode, 401);
  assert.equal((await post(job, `Bearer ${'x'.repeat(10_000)}`)).statusCode, 401);

  const notLive = await post(job);
  assert.equal(notLive.statusCode, 501);
  assert.equal(notLive.headers['x-should-retry'], 'false');
  assertEnvelope(notLive.json(), 'rag_job_runner_not_live', 'server_error');
  // The scheme is case-insensitive (RFC 9110).
  assert.equal((await post(job, `bearer ${secret}`)).statusCode, 501);

  const missingBoundary = await post({ job_class: 'account_or_private_rerank' });
  assert.equal(missingBoundary.statusCode, 400);
  assert.match(assertEnvelope(missingBoundary.json(), 'invalid_request', 'invalid_request_error').error.message, /data_boundary/);
  assert.equal((await post({ ...job, job_class: 'anything' })).statusCode, 400);
  assert.equal((await post({ ...job, privacy_tier: 'public' })).statusCode, 400);
  assert.equal((await post({ ...job, extra: 1 })).statusCode, 400);
  assert.equal((await post({ ...job, data_boundary: 7 })).statusCode, 400);

  for (const source of [undefined, { kind: 'account' }, { kind: 'private' }, { kind: 'customer' }]) {
    const res = await post({ ...job, data_boundary: 'global_public_only', ...(source === undefined ? {} : { source }) });
    assert.equal(res.statusCode, 422, JSON.stringify(source));
    assertEnvelope(res.json(), 'data_boundary_violation', 'invalid_request_error');
  }
  assert.equal((await post({ ...job, data_boundary: 'global_public_only', source: { kind: 'public' }, privacy_tier: 'personal' })).statusCode, 422);
  assert.equal((await post({ ...job, data_boundary: 'global_public_only', source: { kind: 'mesh_safe' }, privacy_tier: 'mesh_safe' })).statusCode, 501);
  assert.equal((await post({ ...job, data_boundary: 'global_public_only', source: { kind: 'public' } })).statusCode, 501);

  const other = await post({ ...job, account_id: 'acct_someone_else' });
  assert.equal(other.statusCode, 403);
  assertEnvelope(other.json(), 'account_mismatch', 'permission_error');
  assert.equal((await post({ ...job, account_id: account.id })).statusCode, 501);

  await store.revokeKey(account.id, key.id);
  const revoked = await post(job);
  assert.equal(revoked.statusCode, 401);
  assertEnvelope(revoked.json(), 'svc_api_key_revoked', 'authentication_error');

  const contract = (await app.inject({ url: '/api/v1/rag/jobs' })).json<{ runner_live: boolean; job_states: unknown[] }>();
  assert.equal(contract.runner_live, false);
  assert.deepEqual(contract.job_states, []);
});

test('hostile input: every answer is the envelope with the right status, never a 5xx', async (t) => {
  const { app, store } = await build(t, { bodyLimit: 1024 });
  const account = await store.createAccount({ name: 'a', plan: { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'developer_runtime' });
  const auth = { authorization: `Bearer ${secret}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const cases: { name: string; request: InjectOptions; status: number; code: string }[] = [
    { name: 'malformed JSON', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: json, payload: '{"job_class":' }, status: 400, code: 'invalid_json' },
    { name: 'empty JSON body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: json, payload: '' }, status: 400, code: 'invalid_json' },
    { name: 'proto pollution', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: json, payload: '{"__proto__":{"x":1}}' }, status: 400, code: 'invalid_json' },
    { name: 'deep nesting', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: json, payload: '['.repeat(200) + ']'.repeat(200) }, status: 400, code: 'json_too_complex' },
    { name: 'oversized body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: json, payload: JSON.stringify({ pad: 'x'.repeat(5000) }) }, status: 413, code: 'request_too_large' },
    { name: 'text/plain body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hello' }, status: 415, code: 'unsupported_media_type' },
    { name: 'form body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' }, status: 415, code: 'unsupported_media_type' },
    { name: 'UTF-16 charset', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: { ...auth, 'content-type': 'application/json; charset=utf-16' }, payload: '{}' }, status: 415, code: 'unsupported_charset' },
    { name: 'array body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: auth, payload: [1, 2] }, status: 400, code: 'invalid_request' },
    { name: 'no body', request: { method: 'POST', url: '/api/v1/rag/jobs', headers: auth }, status: 400, code: 'invalid_request' },
    { name: 'unknown path', request: { method: 'GET', url: '/api/v1/nothing-here' }, status: 404, code: 'unknown_route' },
    { name: 'unknown path, huge', request: { method: 'GET', url: `/api/${'z'.repeat(5000)}` }, status: 404, code: 'unknown_route' },
    { name: 'wrong method', request: { method: 'DELETE', url: '/api/v1/health' }, status: 405, code: 'method_not_allowed' },
    { name: 'PUT on rag jobs', request: { method: 'PUT', url: '/api/v1/rag/jobs', headers: auth, payload: {} }, status: 405, code: 'method_not_allowed' },
    { name: 'huge route headers on a descriptor', request: { method: 'GET', url: '/api/v1/models', headers: { 'x-svc-max-joules': '9'.repeat(7000), 'x-svc-project-id': 'p'.repeat(7000) } }, status: 200, code: '' },
  ];
  for (const c of cases) {
    const res = await app.inject(c.request);
    assert.equal(res.statusCode, c.status, `${c.name}: ${res.body}`);
    if (c.code !== '') assertEnvelope(res.json(), c.code, 'invalid_request_error');
  }
  const wrongMethod = await app.inject({ method: 'DELETE', url: '/api/v1/health' });
  assert.match(String(wrongMethod.headers.allow), /GET/);
});

test('an unexpected failure is an opaque 500 in the envelope', async (t) => {
  const { app } = await build(t, {
    v1Plugins: [async (scope) => {
      scope.get('/boom', async () => { throw new Error('secret internal detail: db password hunter2'); });
    }],
  });
  const res = await app.inject({ url: '/api/v1/boom' });
  assert.equal(res.statusCode, 500);
  assert.doesNotMatch(res.body, /hunter2|internal detail/);
  assertEnvelope(res.json(), 'internal_error', 'server_error');
});

test('requireKey is scoped: public routes never ask for a key, plugins get the identity', async (t) => {
  let seen: string | undefined;
  const { app, store } = await build(t, {
    v1Plugins: [async (scope, context) => {
      scope.get('/whoami', { preHandler: context.requireKey }, async (request) => {
        seen = request.hostedIdentity?.account.id;
        return { account: request.hostedIdentity?.account.id, key: request.hostedIdentity?.key.id };
      });
      scope.get('/open', async (request) => ({ identity: request.hostedIdentity ?? null }));
    }],
  });
  const account = await store.createAccount({ name: 'a', plan: { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false } });
  const { secret, key } = await store.issueKey(account.id, { scope: 'developer_runtime' });
  // A bad key on a public route is ignored, not checked.
  for (const url of ['/api/v1/health', '/api/v1/models', '/api/version', '/docs/hosted', '/api/v1/open']) {
    assert.equal((await app.inject({ url, headers: { authorization: 'Bearer wrong' } })).statusCode, 200, url);
  }
  assert.deepEqual((await app.inject({ url: '/api/v1/open', headers: { authorization: `Bearer ${secret}` } })).json(), { identity: null });
  assert.equal((await app.inject({ url: '/api/v1/whoami' })).statusCode, 401);
  const me = await app.inject({ url: '/api/v1/whoami', headers: { authorization: `Bearer ${secret}` } });
  assert.deepEqual(me.json(), { account: account.id, key: key.id });
  assert.equal(seen, account.id);
});

test('enterprise fleet mode mounts the same model API at /v1, for enterprise keys only', async (t) => {
  const { app: plain } = await build(t);
  assert.equal((await plain.inject({ url: '/v1/health' })).statusCode, 404);
  const { app, store } = await build(t, { enterprise: true });
  assert.equal((await app.inject({ url: '/v1/health' })).statusCode, 200);
  assert.equal((await app.inject({ url: '/v1/models' })).body, (await app.inject({ url: '/api/v1/models' })).body);
  assert.equal((await app.inject({ url: '/api/version' })).json<{ deployment: string }>().deployment, 'enterprise');
  const job = { job_class: 'account_or_private_rerank', data_boundary: 'computer' };
  const small = await store.createAccount({ name: 's', plan: { monthlyJouleAllowance: 0, hostedEntitlement: true, enterprise: false } });
  const big = await store.createAccount({ name: 'b', plan: { monthlyJouleAllowance: 0, hostedEntitlement: true, enterprise: true } });
  const smallKey = (await store.issueKey(small.id, { scope: 'supercomputer' })).secret;
  const bigKey = (await store.issueKey(big.id, { scope: 'supercomputer' })).secret;
  const fleet = await app.inject({ method: 'POST', url: '/v1/rag/jobs', payload: job, headers: { authorization: `Bearer ${smallKey}` } });
  assert.equal(fleet.statusCode, 403);
  assertEnvelope(fleet.json(), 'enterprise_plan_required', 'permission_error');
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', payload: job, headers: { authorization: `Bearer ${smallKey}` } })).statusCode, 501);
  assert.equal((await app.inject({ method: 'POST', url: '/v1/rag/jobs', payload: job, headers: { authorization: `Bearer ${bigKey}` } })).statusCode, 501);
});

test('CORS: only the allow-listed headers, only listed origins; none by default', async (t) => {
  const preflight = (app: FastifyInstance, origin: string, headers: string) => app.inject({
    method: 'OPTIONS', url: '/api/v1/rag/jobs',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });
  const { app: closed } = await build(t);
  const refusedOrigin = await preflight(closed, 'https://app.example', 'authorization');
  assert.equal(refusedOrigin.statusCode, 403);
  assertEnvelope(refusedOrigin.json(), 'cors_origin_not_allowed', 'permission_error');
  assert.equal(refusedOrigin.headers['access-control-allow-origin'], undefined);

  const { app } = await build(t, { corsOrigins: ['https://app.example'] });
  const ok = await preflight(app, 'https://app.example', 'Authorization, content-type, x-svc-execution-policy, x-svc-privacy-tier, x-svc-project-id, x-svc-max-joules, x-svc-max-latency-ms');
  assert.equal(ok.statusCode, 204, ok.body);
  assert.equal(ok.headers['access-control-allow-origin'], 'https://app.example');
  assert.deepEqual(String(ok.headers['access-control-allow-headers']).split(',').map((h) => h.trim()).sort(),
    ['authorization', 'content-type', 'x-svc-execution-policy', 'x-svc-max-joules', 'x-svc-max-latency-ms', 'x-svc-privacy-tier', 'x-svc-project-id']);
  for (const extra of ['x-stainless-os', 'cookie', 'x-api-key']) {
    const refused = await preflight(app, 'https://app.example', `authorization, ${extra}`);
    assert.equal(refused.statusCode, 403, extra);
    assertEnvelope(refused.json(), 'cors_header_not_allowed', 'permission_error');
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
  }
  const other = await preflight(app, 'https://evil.example', 'authorization');
  assert.equal(other.statusCode, 403);
  const simple = await app.inject({ url: '/api/v1/health', headers: { origin: 'https://app.example' } });
  assert.equal(simple.headers['access-control-allow-origin'], 'https://app.example');
  assert.match(String(simple.headers['access-control-expose-headers']), /retry-after/);
  const foreign = await app.inject({ url: '/api/v1/health', headers: { origin: 'https://evil.example' } });
  assert.equal(foreign.headers['access-control-allow-origin'], undefined);
});

test('the registry gives every code a status and type that fit the contract', () => {
  assert.equal(HOSTED_ERROR_CODES.get('svc_api_key_required')?.status, 401);
  assert.equal(HOSTED_ERROR_CODES.get('svc_api_key_revoked')?.type, 'authentication_error');
  assert.equal(HOSTED_ERROR_CODES.get('hosted_entitlement_required')?.status, 402);
  assert.equal(HOSTED_ERROR_CODES.get('rate_limit_exceeded')?.type, 'rate_limit_error');
  for (const [code, { status, type }] of HOSTED_ERROR_CODES) {
    if (status >= 500) assert.equal(type, 'server_error', code);
    if (status === 401) assert.equal(type, 'authentication_error', code);
    if (status === 403) assert.equal(type, 'permission_error', code);
  }
});
