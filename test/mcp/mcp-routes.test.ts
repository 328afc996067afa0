import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { mcpRoutes, DEFAULT_MCP_BODY_LIMIT } from '../../src/mcp/mcp-routes.ts';
import { LocalRuntimeClient } from '../../src/mcp/local-runtime-client.ts';
import { SpaceChanges } from '../../src/mcp/space-changes.ts';

const silent = { info() {}, warn() {} };
const initializeMessage = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

async function build(maxSessions: number) {
  const app = Fastify();
  const changes = new SpaceChanges();
  const draining = new AbortController();
  await app.register(mcpRoutes, {
    // Never called: these tests only open sessions.
    runtime: new LocalRuntimeClient({ baseUrl: 'http://127.0.0.1:9' }),
    log: silent,
    changes,
    stateless: false,
    maxSessions,
    sessionIdleMs: 60_000,
    bodyLimit: DEFAULT_MCP_BODY_LIMIT,
    drainingSignal: draining.signal,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { app, changes, url: `http://127.0.0.1:${address.port}/mcp` };
}

const post = (url: string, body: unknown, accept = 'application/json, text/event-stream') =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });

test('initializes the SDK refuses leave no session behind and take no place under the cap', async () => {
  const { app, changes, url } = await build(2);
  try {
    for (let i = 0; i < 20; i++) {
      // No text/event-stream in Accept: the SDK answers 406 before it registers the session.
      const refused = await post(url, initializeMessage, 'application/json');
      assert.equal(refused.status, 406);
      await refused.text();
    }
    // A batch holding an initialize: the SDK answers 400.
    const batch = await post(url, [initializeMessage, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    assert.equal(batch.status, 400);
    await batch.text();
    // Their servers are closed: only registered sessions listen for document changes.
    for (let i = 0; i < 50 && changes.listenerCount > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(changes.listenerCount, 0);
    // Both places are still free.
    for (let i = 0; i < 2; i++) {
      const ok = await post(url, initializeMessage);
      assert.equal(ok.status, 200);
      await ok.text();
    }
    assert.equal(changes.listenerCount, 2);
    const third = await post(url, initializeMessage);
    assert.equal(third.status, 503);
    await third.text();
  } finally {
    await app.close();
  }
  assert.equal(changes.listenerCount, 0, 'closing the app closes every session');
});

test('concurrent initializes: exactly as many sessions open as the cap allows, the rest are 503', async () => {
  const { app, changes, url } = await build(3);
  try {
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(url, initializeMessage)));
    const statuses = answers.map((r) => r.status);
    await Promise.all(answers.map((r) => r.text()));
    assert.equal(statuses.filter((s) => s === 200).length, 3);
    assert.equal(statuses.filter((s) => s === 503).length, 9);
    assert.equal(changes.listenerCount, 3);
  } finally {
    await app.close();
  }
});
