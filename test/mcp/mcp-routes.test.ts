import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { mcpRoutes } from '../../src/mcp/mcp-routes.ts';
import { LocalRuntimeClient } from '../../src/mcp/local-runtime-client.ts';
import { SpaceChanges } from '../../src/mcp/space-changes.ts';

const initialize = (id: number): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcp-routes-test', version: '1' } },
});
const ACCEPT_BOTH = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function build(changes: SpaceChanges, maxSessions: number): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(mcpRoutes, {
    runtime: new LocalRuntimeClient({ baseUrl: () => 'http://127.0.0.1:9' }),
    log: { info: () => {}, warn: () => {} },
    changes,
    stateless: false,
    maxSessions,
    sessionIdleMs: 60_000,
    bodyLimit: 1024 * 1024,
    drainingSignal: new AbortController().signal,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

const urlOf = (app: FastifyInstance): string => {
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  return `http://127.0.0.1:${address.port}/mcp`;
};

describe('initializes the SDK refuses leave nothing behind', () => {
  const changes = new SpaceChanges();
  let app: FastifyInstance;
  before(async () => {
    app = await build(changes, 4);
  });
  after(async () => {
    await app.close();
  });

  test('an Accept without text/event-stream and a batch with initialize are refused and their servers closed', async () => {
    const before = changes.listenerCount;
    for (let i = 0; i < 20; i++) {
      const noStream = await fetch(urlOf(app), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(initialize(i)) });
      assert.equal(noStream.status, 406);
      await noStream.text();
      const batch = await fetch(urlOf(app), { method: 'POST', headers: ACCEPT_BOTH, body: JSON.stringify([initialize(i), { jsonrpc: '2.0', id: 99, method: 'tools/list' }]) });
      assert.equal(batch.status, 400);
      await batch.text();
    }
    for (let i = 0; i < 50 && changes.listenerCount !== before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(changes.listenerCount, before);

    // The refused ones held no place: all four sessions still open.
    for (let i = 0; i < 4; i++) {
      const ok = await fetch(urlOf(app), { method: 'POST', headers: ACCEPT_BOTH, body: JSON.stringify(initialize(i)) });
      assert.equal(ok.status, 200);
      await ok.text();
    }
    assert.equal(changes.listenerCount, before + 4);
  });
});

describe('the session cap holds for concurrent initializes', () => {
  const changes = new SpaceChanges();
  let app: FastifyInstance;
  // The routes' own listener (it feeds 2026-07-28 subscriptions/listen streams) is there before any session.
  let routesOwn: number;
  before(async () => {
    app = await build(changes, 3);
    routesOwn = changes.listenerCount;
  });
  after(async () => {
    await app.close();
  });

  test('of 12 initializes sent at once, 3 open a session and the rest are 503', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const response = await fetch(urlOf(app), { method: 'POST', headers: ACCEPT_BOTH, body: JSON.stringify(initialize(i)) });
      await response.text();
      return response.status;
    }));
    assert.equal(answers.filter((status) => status === 200).length, 3);
    assert.equal(answers.filter((status) => status === 503).length, 9);
    assert.equal(changes.listenerCount, routesOwn + 3);
  });

  test('closing the app closes every session', async () => {
    await app.close();
    assert.equal(changes.listenerCount, 0);
  });
});
