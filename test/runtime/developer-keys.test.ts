/**
 * Developer keys on the local daemon, end to end: `svc serve --developer-keys …` as a real
 * process, keys issued by the real hosted store (SQLite), exported to a file or read from the
 * store's data dir, and called with fetch and the official `openai` client.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { exportDeveloperKeys } from '../../src/accounts/developer-keys/export-developer-keys.ts';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import type { IssuedKey } from '../../src/accounts/key-store.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { runCliToEnd, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

const FREE = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function get(url: string, authorization?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/models`, { headers: { ...(authorization === undefined ? {} : { authorization }), ...headers } });
}

async function expectError(response: Response, status: number, code: string): Promise<ErrorBody> {
  assert.equal(response.status, status);
  const body = (await response.json()) as ErrorBody;
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(body.error.code, code);
  return body;
}

/** The request log lines so far (read from the daemon's stdout). */
function requestLines(daemon: DaemonProcess): Record<string, unknown>[] {
  return daemon.logs.filter((l) => l.msg === 'request');
}

async function settle(daemon: DaemonProcess, count: number): Promise<void> {
  for (let i = 0; i < 200 && requestLines(daemon).length < count; i++) await new Promise((r) => setTimeout(r, 10));
}

describe('svc serve --developer-keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-devkeys-daemon-'));
  const hostedDir = join(dir, 'hosted');
  const keyFile = join(dir, 'developer-keys.json');
  let store: HostedStore;
  let accountId = '';
  const keys = new Map<string, IssuedKey>();
  let open: DaemonProcess;
  let enforced: DaemonProcess;

  before(async () => {
    store = await openHostedStore({ dataDir: hostedDir });
    const account = await store.createAccount({ name: 'Developer', plan: FREE });
    accountId = account.id;
    for (const name of ['main', 'limited', 'revoked', 'client', 'later']) {
      keys.set(name, await store.issueKey(account.id, { scope: 'developer_runtime', name, project: name === 'main' ? 'proj-main' : null }));
    }
    await store.revokeKey(account.id, keys.get('revoked')!.key.id);
    writeFileSync(keyFile, JSON.stringify(await exportDeveloperKeys(store, account.id)));
    [open, enforced] = await Promise.all([
      startDaemon({ withModel: false, args: ['--developer-keys', keyFile, '--developer-key-rate', '0.2', '--developer-key-burst', '3'] }),
      startDaemon({ withModel: false, args: ['--developer-keys', hostedDir], env: { SVC_REQUIRE_DEVELOPER_KEY: 'true' } }),
    ]);
  });
  after(async () => {
    await Promise.all([open?.stop(), enforced?.stop()]);
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves no key, `none` and other tools\' keys anonymously when not enforced', async () => {
    for (const auth of [undefined, 'Bearer none', 'Bearer sk-openai-looking-key', 'Basic dXNlcjpwYXNz']) {
      const response = await get(open.url, auth);
      assert.equal(response.status, 200, String(auth));
      await response.body?.cancel();
    }
  });

  it('reports the key source in /health: source, enforcement and count, no path', async () => {
    const health = (await (await fetch(`${open.url}/health`)).json()) as { developer_keys: unknown };
    assert.deepEqual(health.developer_keys, { source: 'file', enforced: false, keys: 4 });
    const text = JSON.stringify(health);
    assert.equal(text.includes(keyFile), false);
    const strict = (await (await fetch(`${enforced.url}/health`)).json()) as { status: string; developer_keys: unknown };
    assert.equal(strict.status, 'ok', '/health needs no key even when keys are enforced');
    assert.deepEqual(strict.developer_keys, { source: 'store', enforced: true, keys: 4 });
  });

  it('accepts a valid key: its id, account and project are in the log line; the secret never is', async () => {
    const main = keys.get('main')!;
    const before = requestLines(open).length;
    const response = await get(open.url, `Bearer ${main.secret}`);
    assert.equal(response.status, 200);
    await response.body?.cancel();
    const overridden = await get(open.url, `Bearer ${main.secret}`, { 'x-svc-project-id': 'other-proj' });
    assert.equal(overridden.status, 200);
    await overridden.body?.cancel();
    const malformed = await get(open.url, `Bearer ${main.secret}`, { 'x-svc-project-id': 'has spaces' });
    assert.equal(malformed.status, 200);
    await malformed.body?.cancel();
    await settle(open, before + 3);
    const lines = requestLines(open).slice(before);
    assert.deepEqual(lines.map((l) => [l.key_id, l.account_id, l.project]), [
      [main.key.id, accountId, 'proj-main'],
      [main.key.id, accountId, 'other-proj'],
      [main.key.id, accountId, 'proj-main'],
    ]);
    const output = JSON.stringify(open.logs) + open.stderr();
    assert.equal(output.includes(main.secret), false);
    assert.equal(output.includes(main.secret.slice(7)), false);
  });

  it('refuses a revoked key and an unknown svc_ key with 401 in the local envelope', async () => {
    const revoked = await expectError(await get(open.url, `Bearer ${keys.get('revoked')!.secret}`), 401, 'developer_key_revoked');
    assert.equal(revoked.error.type, 'authentication_error');
    await expectError(await get(open.url, `Bearer svc_dk_${'x'.repeat(43)}`), 401, 'developer_key_invalid');
    await expectError(await get(open.url, 'Bearer svc_dk_short'), 401, 'developer_key_invalid');
    const response = await get(open.url, `Bearer svc_${'y'.repeat(5000)}`);
    assert.equal(response.status, 200, 'an Authorization value past 512 characters is not read as a key');
    await response.body?.cancel();
  });

  it('limits each key on its own: 429 with Retry-After after the burst, other keys unaffected', async () => {
    const limited = keys.get('limited')!;
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 5; i++) {
      const response = await get(open.url, `Bearer ${limited.secret}`);
      statuses.push(response.status);
      if (response.status === 429) {
        retryAfter = response.headers.get('retry-after');
        const body = (await response.json()) as ErrorBody;
        assert.equal(body.error.code, 'rate_limit_exceeded');
        assert.equal(body.error.type, 'rate_limit_error');
      } else {
        await response.body?.cancel();
      }
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 5, String(retryAfter));
    const other = await get(open.url, `Bearer ${keys.get('later')!.secret}`);
    assert.equal(other.status, 200);
    await other.body?.cancel();
    const anonymous = await get(open.url);
    assert.equal(anonymous.status, 200);
    await anonymous.body?.cancel();
  });

  it('works with the official openai client given the developer key as apiKey', async () => {
    const client = new OpenAI({ baseURL: `${open.url}/v1`, apiKey: keys.get('client')!.secret, maxRetries: 0 });
    const models = await client.models.list();
    assert.ok(Array.isArray(models.data));
    const revoked = new OpenAI({ baseURL: `${open.url}/v1`, apiKey: keys.get('revoked')!.secret, maxRetries: 0 });
    await assert.rejects(revoked.models.list(), (e: unknown) => e instanceof OpenAI.AuthenticationError && (e as { code?: string }).code === 'developer_key_revoked');
    const none = new OpenAI({ baseURL: `${open.url}/v1`, apiKey: 'none', maxRetries: 0 });
    assert.ok(Array.isArray((await none.models.list()).data));
  });

  it('with enforcement: no key, `none` and other bearer values get 401 developer_key_required; a key works', async () => {
    for (const auth of [undefined, 'Bearer none', 'Bearer sk-other']) {
      const body = await expectError(await get(enforced.url, auth), 401, 'developer_key_required');
      assert.match(body.error.message, /developer key/);
    }
    const response = await get(enforced.url, `Bearer ${keys.get('main')!.secret}`);
    assert.equal(response.headers.get('www-authenticate'), null);
    assert.equal(response.status, 200);
    await response.body?.cancel();
    const client = new OpenAI({ baseURL: `${enforced.url}/v1`, apiKey: 'none', maxRetries: 0 });
    await assert.rejects(client.models.list(), OpenAI.AuthenticationError);
  });

  it('with enforcement: x-api-key is read like a bearer token (the Anthropic client sends it); refusals on /v1/messages are in Anthropic\'s envelope', async () => {
    const keyed = await get(enforced.url, undefined, { 'x-api-key': keys.get('main')!.secret });
    assert.equal(keyed.status, 200);
    await keyed.body?.cancel();
    // Another tool's key in Authorization does not hide an svc key in x-api-key.
    const both = await get(enforced.url, 'Bearer sk-other', { 'x-api-key': keys.get('main')!.secret });
    assert.equal(both.status, 200);
    await both.body?.cancel();
    await expectError(await get(enforced.url, undefined, { 'x-api-key': 'svc_dk_not_a_key' }), 401, 'developer_key_invalid');
    const ask = { model: 'absent', max_tokens: 4, messages: [{ role: 'user' as const, content: 'hi' }] };
    // Past the guard, the daemon (no model) answers 404: the key was accepted.
    const client = new Anthropic({ baseURL: enforced.url, apiKey: keys.get('main')!.secret, maxRetries: 0 });
    await assert.rejects(client.messages.create(ask), (e: unknown) => e instanceof Anthropic.NotFoundError);
    const anonymous = new Anthropic({ baseURL: enforced.url, apiKey: 'none', maxRetries: 0 });
    await assert.rejects(anonymous.messages.create(ask), (e: unknown) => {
      assert.ok(e instanceof Anthropic.AuthenticationError);
      assert.deepEqual(Object.keys((e.error as { error: object }).error).sort(), ['message', 'type']);
      assert.equal((e.error as { error: { type: string } }).error.type, 'authentication_error');
      return true;
    });
  });

  it('with enforcement: a job request refused for want of a key is not a job; the same request with the key is', async () => {
    const auth = { authorization: `Bearer ${keys.get('main')!.secret}` };
    const dailyCount = async (): Promise<number> => {
      const response = await fetch(`${enforced.url}/telemetry`, { headers: auth });
      assert.equal(response.status, 200);
      return ((await response.json()) as { payload: { daily_job_count: number } }).payload.daily_job_count;
    };
    const embed = (headers: Record<string, string>) => fetch(`${enforced.url}/v1/embeddings`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'svc-hashed-embed-v2', input: 'pumps' }),
    });
    const before = await dailyCount();
    await expectError(await embed({}), 401, 'developer_key_required');
    await expectError(await embed({ authorization: 'Bearer svc_dk_not_a_key' }), 401, 'developer_key_invalid');
    const keyed = await embed(auth);
    assert.equal(keyed.status, 200);
    await keyed.body?.cancel();
    // The job is recorded once its answer is sent; the refused ones, answered first, would be by then.
    let count = before;
    for (let i = 0; i < 500 && count === before; i++) count = await dailyCount();
    assert.equal(count, before + 1);
  });

  it('reading the hosted store, a revocation takes effect on the next request', async () => {
    const later = keys.get('later')!;
    const ok = await get(enforced.url, `Bearer ${later.secret}`);
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    await store.revokeKey(accountId, later.key.id);
    const refused = await get(enforced.url, `Bearer ${later.secret}`);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="svc"');
    await expectError(refused, 401, 'developer_key_revoked');
  });

  it('refuses to start with enforcement but no key source, or a key source that cannot be read', async () => {
    const noSource = await runCliToEnd(['serve', '--port', '0', '--data-dir', dir, '--require-developer-key']);
    assert.equal(noSource.code, 2);
    assert.match(noSource.stderr, /--require-developer-key needs --developer-keys/);
    const missing = await runCliToEnd(['serve', '--port', '0', '--data-dir', dir, '--developer-keys', join(dir, 'nope.json')]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--developer-keys: developer keys: .*nope\.json: no such file or directory/);
    const notAStore = await runCliToEnd(['serve', '--port', '0', '--data-dir', dir, '--developer-keys', dir]);
    assert.notEqual(notAStore.code, 0);
    assert.match(notAStore.stderr, /a directory without a hosted store/);
  });
});
