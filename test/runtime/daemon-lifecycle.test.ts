/**
 * The daemon as an operator sees it: loopback-only binding, DNS-rebinding protection, health,
 * a daemon with no model, admission control beyond the parallel limit, idle unloading, slow
 * clients and graceful shutdown. Every case runs the real `svc serve` process.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { runCli, startDaemon, waitForHealth, readRest } from '../helpers/daemon-process.ts';

const chatBody = (maxTokens: number, stream = false) =>
  JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'talk' }], max_tokens: maxTokens, stream });

const postChat = (url: string, body: string) =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('binding and DNS-rebinding protection', () => {
  test('a non-loopback --host is refused with a clear message', async () => {
    for (const host of ['0.0.0.0', '192.168.1.10', 'example.com']) {
      const child = runCli(['serve', '--host', host, '--port', '0']);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 2);
      assert.match(stderr, /loopback addresses only/);
    }
  });

  test('requests whose Host or Origin is not loopback get 403; loopback ones pass', async () => {
    const daemon = await startDaemon({ withModel: false });
    try {
      // fetch() will not send a forged Host header; node:http will.
      const get = (headers: Record<string, string>) =>
        new Promise<{ status: number; json: () => Promise<unknown> }>((resolve, reject) => {
          request(`${daemon.url}/health`, { headers }, (res) => {
            let text = '';
            res.on('data', (d: Buffer) => { text += d.toString(); });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, json: async () => JSON.parse(text) }));
          }).on('error', reject).end();
        });
      const refused: Record<string, string>[] = [{ host: 'evil.example' }, { host: 'evil.example:11435' }, { origin: 'http://evil.example' }, { origin: 'null' }, { host: '10.0.0.1' }];
      for (const headers of refused) {
        const res = await get(headers);
        assert.equal(res.status, 403, JSON.stringify(headers));
        const body = (await res.json()) as { error: { type: string; code: string } };
        assert.equal(body.error.type, 'permission_error');
        assert.equal(body.error.code, 'forbidden_host');
      }
      const allowed: Record<string, string>[] = [{}, { host: `localhost:${daemon.port}` }, { host: `127.0.0.1:${daemon.port}` }, { host: `[::1]:${daemon.port}` }, { origin: 'http://localhost:3000' }, { origin: 'http://127.0.0.1:8080' }];
      for (const headers of allowed) {
        assert.equal((await get(headers)).status, 200, JSON.stringify(headers));
      }
      // Both loopback families are served on the same port.
      assert.ok(daemon.urls.some((u) => u.startsWith('http://127.0.0.1:')));
      for (const url of daemon.urls) assert.equal((await fetch(`${url}/health`)).status, 200, url);
    } finally {
      await daemon.stop();
    }
  });
});

describe('health and a daemon with no model', () => {
  test('health reports the truth and chat explains how to add a model', async () => {
    const daemon = await startDaemon({ withModel: false });
    try {
      const health = (await (await fetch(`${daemon.url}/health`)).json()) as {
        status: string; model: { available: string[]; loaded: string[] }; network: { loopback_only: boolean; listen: string[] };
        telemetry: string; outbound_connections: number; upstreams: unknown[]; substrate: string;
      };
      assert.equal(health.status, 'ok');
      assert.deepEqual(health.model.available, []);
      assert.deepEqual(health.model.loaded, []);
      assert.equal(health.network.loopback_only, true);
      assert.deepEqual(health.network.listen, daemon.urls);
      assert.equal(health.telemetry, 'none');
      assert.equal(health.outbound_connections, 0);
      assert.deepEqual(health.upstreams, []);
      assert.equal(health.substrate, 'local');

      const res = await postChat(daemon.url, chatBody(4));
      assert.equal(res.status, 404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'model_not_found');
      assert.match(body.error.message, /--model/);
      assert.ok(daemon.logs.some((l) => l.level === 40 && String(l.msg).startsWith('no model configured')));
    } finally {
      await daemon.stop();
    }
  });
});

describe('inference scheduling', () => {
  test('beyond parallel + queue, requests get 503 with Retry-After; admitted ones complete', async () => {
    const daemon = await startDaemon({ args: ['--parallel', '1', '--queue-size', '1'] });
    try {
      const responses = await Promise.all([1, 2, 3, 4].map(() => postChat(daemon.url, chatBody(1500))));
      const statuses = responses.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 200, 503, 503]);
      for (const res of responses) {
        const body = (await res.json()) as { error?: { code: string; type: string }; usage?: { completion_tokens: number } };
        if (res.status === 503) {
          assert.equal(res.headers.get('retry-after'), '1');
          assert.equal(body.error?.code, 'model_overloaded');
        } else {
          assert.ok((body.usage?.completion_tokens ?? 0) > 0);
        }
      }
    } finally {
      await daemon.stop();
    }
  });

  test('requests within parallel + queue all complete (continuous batching)', async () => {
    const daemon = await startDaemon({ args: ['--parallel', '2', '--queue-size', '8'] });
    try {
      const responses = await Promise.all(Array.from({ length: 6 }, () => postChat(daemon.url, chatBody(40))));
      assert.deepEqual(responses.map((r) => r.status), [200, 200, 200, 200, 200, 200]);
      for (const res of responses) assert.equal(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 40);
    } finally {
      await daemon.stop();
    }
  });

  test('loading a model does not hold up other requests', async () => {
    const daemon = await startDaemon();
    try {
      let chatDone = false;
      const chat = postChat(daemon.url, chatBody(4)).then((r) => { chatDone = true; return r; });
      // The first chat loads llama.cpp and the model; health must not wait for that.
      await new Promise((r) => setTimeout(r, 20));
      const health = await fetch(`${daemon.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(chatDone, false, 'health answered before the loading chat finished');
      assert.equal((await chat).status, 200);
    } finally {
      await daemon.stop();
    }
  });

  test('an idle model unloads after --keep-alive', async () => {
    const daemon = await startDaemon({ args: ['--keep-alive', '300ms'] });
    try {
      assert.equal((await postChat(daemon.url, chatBody(2))).status, 200);
      let loaded: string[] = ['tiny'];
      for (let i = 0; i < 100 && loaded.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        loaded = ((await (await fetch(`${daemon.url}/health`)).json()) as { model: { loaded: string[] } }).model.loaded;
      }
      assert.deepEqual(loaded, []);
      // The log line comes over the daemon's stdout, which can reach this process after /health's answer.
      const unloadedLogged = () => daemon.logs.some((l) => l.msg === 'model unloaded');
      for (let i = 0; i < 50 && !unloadedLogged(); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(unloadedLogged());
      // And loads again on the next request.
      assert.equal((await postChat(daemon.url, chatBody(2))).status, 200);
    } finally {
      await daemon.stop();
    }
  });
});

describe('slow clients and shutdown', () => {
  test('a client that never finishes sending its request is cut off after --request-timeout', async () => {
    const daemon = await startDaemon({ withModel: false, args: ['--request-timeout', '1s'] });
    try {
      const socket = connect(daemon.port, '127.0.0.1');
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`);
      let received = '';
      socket.on('data', (d: Buffer) => { received += d.toString(); });
      const closed = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 15_000);
        socket.once('close', () => { clearTimeout(timer); resolve(true); });
      });
      assert.ok(closed, 'the daemon closed the stalled connection');
      assert.match(received, /^HTTP\/1\.1 408/);
      assert.equal((await fetch(`${daemon.url}/health`)).status, 200);
    } finally {
      await daemon.stop();
    }
  });

  test('SIGTERM ends an open stream cleanly with an error event and [DONE], then exits 0', async () => {
    const daemon = await startDaemon({ args: ['--shutdown-timeout', '300ms', '--context-size', '8192'] });
    const res = await postChat(daemon.url, chatBody(8000, true));
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    const code = daemon.stop('SIGTERM');
    const text = await readRest(reader, first.value);
    assert.equal(await code, 0);
    assert.match(text, /"code":"server_shutting_down"/);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'));
    assert.ok(daemon.logs.some((l) => l.msg === 'stopped'));
  });

  test('SIGTERM lets an in-flight request finish within the grace period', async () => {
    const daemon = await startDaemon({ args: ['--shutdown-timeout', '20s'] });
    assert.equal((await postChat(daemon.url, chatBody(2))).status, 200); // load the model first
    const pending = postChat(daemon.url, chatBody(1000));
    assert.equal((await waitForHealth(daemon.url, (h) => h.model.active === 1)).model.active, 1);
    const code = daemon.stop('SIGTERM');
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 1000);
    assert.equal(await code, 0);
  });

  test('SIGINT with nothing in flight exits 0 at once and unloads models', async () => {
    const daemon = await startDaemon();
    assert.equal((await postChat(daemon.url, chatBody(2))).status, 200);
    assert.equal(await daemon.stop('SIGINT'), 0);
    assert.ok(daemon.logs.some((l) => l.msg === 'model unloaded'));
  });
});
