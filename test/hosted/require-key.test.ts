/**
 * The key check of the hosted routes: a disabled account's keys and sessions are refused, and
 * every request it lets through (or refuses for a known key) is attributed in the log.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { usagePlugin } from '../../src/hosted/chat/usage-route.ts';
import { buildTestHostedApp, PAID_PLAN, signIn } from '../helpers/hosted-app-fixture.ts';

interface Envelope { error: { message: string; type: string; code: string; docs_url: string } }

const RAG_JOB = { job_class: 'account_or_private_rerank', data_boundary: 'private_supercomputer' };

test('a disabled account: its keys get 401 svc_account_disabled, its sessions and sign-in links are refused; enable restores keys only', async (t) => {
  const { app, store } = await buildTestHostedApp(t, { v1Plugins: [usagePlugin()] });
  const me = await signIn(app, store, PAID_PLAN);
  const { secret } = await store.issueKey(me.account.id, { scope: 'supercomputer' });
  const pending = await store.createSignInToken(me.account.id, 60_000);
  const ragJob = () => app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${secret}` }, payload: RAG_JOB });
  const usage = (headers: Record<string, string>) => app.inject({ url: '/api/v1/usage', headers });
  assert.equal((await ragJob()).statusCode, 501, 'the key gets through before');
  assert.equal((await usage({ cookie: me.cookie })).statusCode, 200);

  await store.disableAccount(me.account.id);
  for (const res of [await ragJob(), await usage({ authorization: `Bearer ${secret}` })]) {
    assert.equal(res.statusCode, 401, res.body);
    const { error } = res.json<Envelope>();
    assert.deepEqual([error.type, error.code, error.docs_url], ['authentication_error', 'svc_account_disabled', '/docs/hosted#svc_account_disabled']);
  }
  assert.equal((await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } })).json<Envelope>().error.code, 'session_required');
  assert.equal((await usage({ authorization: `Bearer ${me.sessionToken}` })).json<Envelope>().error.code, 'session_required');
  assert.equal((await usage({ cookie: me.cookie })).statusCode, 401);
  const link = await app.inject({ method: 'POST', url: '/api/session', payload: { token: pending.token } });
  assert.equal(link.statusCode, 401);
  assert.equal(link.json<Envelope>().error.code, 'sign_in_link_invalid');
  const month = new Date().toISOString().slice(0, 7);
  assert.deepEqual(await store.ledgerTotal(me.account.id, month), { joules: 0, rows: 0 }, 'nothing was billed');

  await store.enableAccount(me.account.id);
  assert.equal((await ragJob()).statusCode, 501, 'keys work again');
  assert.equal((await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } })).statusCode, 401, 'ended sessions stay ended');
});

test('request log lines carry account_id and key_id once the key is known (refused ones too), never the secret', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk: Buffer, _encoding, done) { for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>); done(); } });
  const { app, store } = await buildTestHostedApp(t, { logger: pino({ level: 'info' }, sink) });
  const me = await signIn(app, store, PAID_PLAN);
  const live = await store.issueKey(me.account.id, { scope: 'supercomputer' });
  const revoked = await store.issueKey(me.account.id, { scope: 'supercomputer' });
  await store.revokeKey(me.account.id, revoked.key.id);
  const requestLine = (status: number) => lines.filter((l) => l.msg === 'request' && l.status === status).at(-1);

  await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${live.secret}` }, payload: RAG_JOB });
  assert.deepEqual([requestLine(501)?.account_id, requestLine(501)?.key_id], [me.account.id, live.key.id]);

  await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: `Bearer ${revoked.secret}` }, payload: RAG_JOB });
  assert.deepEqual([requestLine(401)?.account_id, requestLine(401)?.key_id], [me.account.id, revoked.key.id]);

  await app.inject({ method: 'POST', url: '/api/v1/rag/jobs', headers: { authorization: 'Bearer svc_sk_unknown' }, payload: RAG_JOB });
  assert.equal(Object.hasOwn(requestLine(401)!, 'account_id'), false, 'an unknown key names no account');

  // A signed-in session's requests name the account (no key).
  await app.inject({ url: '/api/keys', headers: { cookie: me.cookie } });
  const session = requestLine(200)!;
  assert.equal(session.path, '/api/keys');
  assert.equal(session.account_id, me.account.id);
  assert.equal(Object.hasOwn(session, 'key_id'), false);

  const text = JSON.stringify(lines);
  for (const secret of [live.secret, revoked.secret, me.sessionToken]) assert.ok(!text.includes(secret), 'a secret was logged');
});
