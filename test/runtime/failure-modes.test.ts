/**
 * What happens when things go wrong while the daemon is busy: a failing choice stops its
 * siblings, queued requests at shutdown, kept-alive sockets during shutdown, malformed URLs,
 * environment configuration, CORS, and that prompts never reach the logs.
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { describe, test } from 'node:test';
import { startDaemon, tinyModelPath, waitForHealth } from '../helpers/daemon-process.ts';

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function httpPost(url: string, path: string, body: unknown, agent: Agent): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function waitForLog(logs: Record<string, unknown>[], match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | undefined> {
  for (let i = 0; i < 100; i++) {
    const found = logs.find(match);
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

describe('failure modes', () => {
  test('a prompt array where one prompt fails answers 400 for it and stops the other prompts', async () => {
    const daemon = await startDaemon();
    try {
      const res = await post(daemon.url, '/v1/completions', { model: 'tiny', prompt: ['hello', 'hello '.repeat(6000)], max_tokens: 3000 });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: { code: string; param: string } };
      assert.equal(body.error.code, 'context_length_exceeded');
      assert.equal(body.error.param, 'prompt');
      const line = await waitForLog(daemon.logs, (l) => l.msg === 'request' && l.path === '/v1/completions');
      assert.equal(line?.status, 400);
      assert.equal(line?.finish, 'cancelled_after_error');
      assert.ok((line?.completion_tokens as number) < 3000, 'the sibling generation was stopped');
    } finally {
      await daemon.stop();
    }
  });

  test('at shutdown, running and queued requests get 503 server_shutting_down, never a 500', async () => {
    const daemon = await startDaemon({ args: ['--parallel', '1', '--shutdown-timeout', '300ms', '--context-size', '8192'] });
    const chat = { model: 'tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 8000 };
    const running = post(daemon.url, '/v1/chat/completions', chat);
    const queued = post(daemon.url, '/v1/chat/completions', chat);
    // Signal only once the daemon holds one request running and one queued: a request still
    // unread in its socket when shutdown starts is (rightly) just disconnected.
    const { model } = await waitForHealth(daemon.url, (h) => h.model.active === 1 && h.model.waiting === 1);
    assert.deepEqual([model.active, model.waiting], [1, 1]);
    const exit = daemon.stop('SIGTERM');
    for (const res of await Promise.all([running, queued])) {
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'server_shutting_down');
    }
    assert.equal(await exit, 0);
    assert.ok(!daemon.logs.some((l) => (l.level as number) >= 50), 'nothing logged as an error');
  });

  test('during shutdown a kept-alive socket is closed after its in-flight response', async () => {
    const daemon = await startDaemon({ args: ['--shutdown-timeout', '20s'] });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const chat = { model: 'tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 1000 };
      assert.equal((await httpPost(daemon.url, '/v1/chat/completions', chat, agent)).status, 200);
      const inFlight = httpPost(daemon.url, '/v1/chat/completions', chat, agent);
      assert.equal((await waitForHealth(daemon.url, (h) => h.model.active === 1)).model.active, 1);
      const exit = daemon.stop('SIGTERM');
      const first = await inFlight;
      assert.equal(first.status, 200);
      assert.equal(first.headers.connection, 'close');
      // The next request cannot reuse the socket, and no new connection is accepted.
      await assert.rejects(httpPost(daemon.url, '/v1/chat/completions', chat, agent));
      assert.equal(await exit, 0);
    } finally {
      agent.destroy();
      await daemon.stop();
    }
  });

  test('percent-encoded and malformed model URLs answer in the envelope', async () => {
    const daemon = await startDaemon({ withModel: false });
    try {
      const encoded = await fetch(`${daemon.url}/v1/models/100%25`);
      assert.equal(encoded.status, 404);
      assert.match(((await encoded.json()) as { error: { message: string } }).error.message, /"100%"/);
      const bad = await fetch(`${daemon.url}/v1/models/%E0%A4%A`);
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
    } finally {
      await daemon.stop();
    }
  });
});

describe('configuration, CORS and privacy', () => {
  test('SVC_* environment variables configure svc serve', async () => {
    const daemon = await startDaemon({ withModel: false, env: { SVC_MODEL: `from-env=${tinyModelPath()}`, SVC_PARALLEL: '2' } });
    try {
      const models = (await (await fetch(`${daemon.url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.deepEqual(models.data.map((m) => m.id), ['from-env', 'svc-hashed-embed-v2']);
      await post(daemon.url, '/v1/chat/completions', { model: 'from-env', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
      assert.ok(daemon.logs.some((l) => l.msg === 'model loaded' && l.parallel === 2));
    } finally {
      await daemon.stop();
    }
  });

  test('browsers on a loopback origin get CORS answers; other origins are refused', async () => {
    const daemon = await startDaemon({ withModel: false });
    try {
      const preflight = await fetch(`${daemon.url}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      const evil = await fetch(`${daemon.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(evil.status, 403);
    } finally {
      await daemon.stop();
    }
  });

  test('prompts and outputs never appear in the logs at the default level', async () => {
    const daemon = await startDaemon();
    const marker = 'zebra-marker-7731';
    try {
      for (const stream of [false, true]) {
        const res = await post(daemon.url, '/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: marker }], max_tokens: 4, stream });
        await res.text();
      }
      await (await post(daemon.url, '/v1/embeddings', { model: 'tiny', input: marker })).text();
      await (await post(daemon.url, '/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: marker }], max_tokens: 'x' })).text();
    } finally {
      await daemon.stop();
    }
    const everything = JSON.stringify(daemon.logs) + daemon.stderr();
    assert.ok(daemon.logs.filter((l) => l.msg === 'request').length >= 4);
    assert.ok(!everything.includes(marker));
  });
});
