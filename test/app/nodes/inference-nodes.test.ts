/**
 * Inference nodes on real parts: a `svc hosted` gateway and `svc serve --join` nodes as separate
 * processes (the tiny GGUF fixture on each), chatting through the gateway. No GPU here: each node's
 * energy counter is a file (SVC_GPU_ENERGY_COUNTER_FILE) the test keeps raising while requests run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createNodeToken } from '../../../src/hosted/nodes/node-tokens.ts';
import { startServerProcess, tinyModelPath, type DaemonProcess } from '../../helpers/daemon-process.ts';
import { freePort } from '../../helpers/free-port.ts';
import { randomBytes } from 'node:crypto';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { freshPostgresSchema, prepareHostedDataDir } from '../../helpers/hosted-stores.ts';
import { postgresUnavailable, redisUnavailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../../helpers/test-services.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const NO_POSTGRES = await postgresUnavailable('the replica test');
const NO_SERVICES = NO_POSTGRES !== false ? NO_POSTGRES : await redisUnavailable('the replica test');

interface Route { provider: string; raw_joules: number | null; billable_joules: number; estimated_joules: number; fallback: boolean; fallback_reason: string | null; evidence_id: string }

const a = createNodeToken('node-a');
const b = createNodeToken('node-b');

async function startGateway(t: TestContext, dataDir: string, extra: string[] = []): Promise<DaemonProcess> {
  const gateway = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`,
    '--node-token-hash', a.entry, '--node-token-hash', b.entry, '--node-ttl', '2s', '--log-level', 'info', ...extra], { env: { SVC_THREADS: '1' } });
  t.after(() => gateway.stop());
  return gateway;
}

/** A counter file its test raises by 5 J every few ms (a GPU drawing a steady load), stopped with the test. */
function energyCounter(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-gpu-counter-'));
  const file = join(dir, 'energy_mj');
  let mj = 1_000_000;
  writeFileSync(file, `${mj}\n`);
  // Replaced whole (write, then rename), as a counter exporter must: a reader never sees half a number.
  const timer = setInterval(() => {
    mj += 5000;
    writeFileSync(`${file}.next`, `${mj}\n`);
    renameSync(`${file}.next`, file);
  }, 2);
  t.after(() => {
    clearInterval(timer);
    rmSync(dir, { recursive: true, force: true });
  });
  return file;
}

async function startNode(t: TestContext, gatewayUrl: string, token: string, counterFile?: string): Promise<DaemonProcess & { nodeUrl: string }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-node-'));
  const node = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`,
    '--join', gatewayUrl, '--advertise-url', `http://127.0.0.1:${port}`, '--node-listen', `127.0.0.1:${port}`], {
    env: { SVC_NODE_TOKEN: token, ...(counterFile !== undefined ? { SVC_GPU_ENERGY_COUNTER_FILE: counterFile } : {}) },
    onExit: () => rmSync(dataDir, { recursive: true, force: true }),
  });
  t.after(() => node.stop('SIGKILL'));
  await waitFor(() => node.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('joined ')), 'the node to join');
  return Object.assign(node, { nodeUrl: `http://127.0.0.1:${port}` });
}

function chat(gatewayUrl: string, secret: string, body: object = {}): Promise<Response> {
  return fetch(`${gatewayUrl}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, ...body }),
  });
}

async function routeOf(response: Response): Promise<Route> {
  const body = await response.json() as { svc_route?: Route; error?: unknown };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.svc_route!;
}

test('a chat through the gateway runs on the joined node; the evidence names it and carries the node\'s measured Joules', async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-one');
  const gateway = await startGateway(t, dataDir);
  const node = await startNode(t, gateway.url, a.token, energyCounter(t));
  const route = await routeOf(await chat(gateway.url, secret));
  assert.equal(route.provider, 'svc-node@node-a');
  assert.equal(route.fallback, false);
  assert.equal(typeof route.raw_joules, 'number', 'the node measured its counter');
  assert.ok(route.raw_joules! > 0);
  assert.ok(route.billable_joules >= route.raw_joules! && route.billable_joules >= route.estimated_joules);
  const evidence = await (await fetch(`${gateway.url}/api/v1/evidence/${route.evidence_id}`, { headers: { authorization: `Bearer ${secret}` } })).json() as { svc_route: Route };
  assert.equal(evidence.svc_route.provider, 'svc-node@node-a', 'the stored evidence names the node too');
  assert.equal(evidence.svc_route.raw_joules, route.raw_joules);
  assert.ok(!gateway.logs.some((l) => JSON.stringify(l).includes(a.token)), 'the node token never reaches the gateway log');
  assert.ok(!node.logs.some((l) => JSON.stringify(l).includes(a.token)), 'nor the node\'s');
  // SIGTERM: the node leaves at once (no TTL wait) and the engine serves the next request.
  assert.equal(await node.stop('SIGTERM'), 0);
  await waitFor(() => gateway.logs.some((l) => l.msg === 'inference node node-a left'), 'the gateway to log the leave');
  const after = await routeOf(await chat(gateway.url, secret));
  assert.equal(after.provider, 'svc-llama.cpp');
  assert.equal(after.fallback_reason, 'no_live_node');
});

test('wrong or missing node tokens are refused with the envelope; the node listener refuses callers without the gateway\'s call token', async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-refuse');
  const gateway = await startGateway(t, dataDir);
  const stranger = createNodeToken('node-a');
  for (const authorization of [`Bearer ${stranger.token}`, 'Bearer nonsense', undefined, `Bearer ${secret}`]) {
    const response = await fetch(`${gateway.url}/api/nodes/heartbeat`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) }, body: '{}',
    });
    assert.equal(response.status, 401);
    const body = await response.json() as { error: { code: string; type: string; docs_url: string } };
    assert.equal(body.error.code, 'node_token_invalid');
    assert.equal(body.error.type, 'authentication_error');
    assert.equal(body.error.docs_url, '/docs/hosted#node_token_invalid');
  }
  // A good token with a body that is not a heartbeat: 400 naming the field.
  const malformed = await fetch(`${gateway.url}/api/nodes/heartbeat`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` }, body: JSON.stringify({ advertise_url: 'ftp://x' }) });
  assert.equal(malformed.status, 400);
  const problem = (await malformed.json() as { error: { code: string; message: string } }).error;
  assert.equal(problem.code, 'invalid_request');
  assert.match(problem.message, /advertise_url/);
  // A node started with a wrong token keeps its daemon, logs the refusal, and never serves the gateway.
  const port = await freePort();
  const dataDirNode = mkdtempSync(join(tmpdir(), 'svc-node-'));
  const refused = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDirNode, '--join', gateway.url, '--advertise-url', `http://127.0.0.1:${port}`, '--node-listen', `127.0.0.1:${port}`],
    { env: { SVC_NODE_TOKEN: stranger.token }, onExit: () => rmSync(dataDirNode, { recursive: true, force: true }) });
  t.after(() => refused.stop('SIGKILL'));
  await waitFor(() => refused.logs.some((l) => typeof l.msg === 'string' && l.msg.includes('refused this node\'s token')), 'the refusal');
  assert.ok(!JSON.stringify(refused.logs).includes(stranger.token), 'the node never logs its token');
  // The node listener: no call token, no entry; nothing but chat and models even with one.
  const bare = await fetch(`http://127.0.0.1:${port}/v1/models`);
  assert.equal(bare.status, 401);
  assert.equal((await bare.json() as { error: { code: string } }).error.code, 'node_call_token_invalid');
  const route = await routeOf(await chat(gateway.url, secret));
  assert.equal(route.provider, 'svc-llama.cpp', 'no node joined: the engine served');
  assert.equal(route.fallback_reason, 'no_live_node');
});

test('two nodes: a request goes to the less loaded one', async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-two');
  const gateway = await startGateway(t, dataDir);
  await startNode(t, gateway.url, a.token);
  await startNode(t, gateway.url, b.token);
  // Equal load: the tie goes to the first id. Hold that node busy with a stream...
  const long = await chat(gateway.url, secret, { stream: true, max_tokens: 400 });
  const reader = long.body!.getReader();
  await reader.read();
  // ...and the next request goes to the other one.
  const second = await routeOf(await chat(gateway.url, secret));
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const first = JSON.parse(/"svc_route":(\{[^}]*\})/.exec(text)![1]!) as Route;
  assert.equal(first.provider, 'svc-node@node-a');
  assert.equal(second.provider, 'svc-node@node-b');
});

test('a node killed with SIGKILL: before the first byte the next node (or the engine) serves, with the reason recorded; mid-stream the stream ends with an error event, recorded; a dead node is dropped after the TTL', async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-kill');
  const gateway = await startGateway(t, dataDir, ['--node-ttl', '10s']);
  const nodeA = await startNode(t, gateway.url, a.token);
  const nodeB = await startNode(t, gateway.url, b.token);

  // Before the first byte: node-a (first on the tie, both idle) is dead but still registered.
  nodeA.child.kill('SIGKILL');
  await nodeA.exited;
  const retried = await routeOf(await chat(gateway.url, secret));
  assert.equal(retried.provider, 'svc-node@node-b');
  assert.equal(retried.fallback, true);
  assert.equal(retried.fallback_reason, 'node_failed:node-a:upstream_unavailable');

  // After its TTL the dead node is gone: no attempt on it at all.
  await waitFor(async () => {
    const r = await routeOf(await chat(gateway.url, secret));
    return r.provider === 'svc-node@node-b' && r.fallback === false;
  }, 'node-a to expire');

  // Mid-stream: bytes reached the caller, so there is no going back.
  const stream = await chat(gateway.url, secret, { stream: true, max_tokens: 400 });
  const reader = stream.body!.getReader();
  await reader.read();
  nodeB.child.kill('SIGKILL');
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  assert.match(text, /"error"/, 'the stream ends with an error event');
  // The usage chunk before the error carries the evidence of what ran (recorded and billed).
  assert.match(text, /"svc_outcome":"failed"/);
  const failed = JSON.parse(/"svc_route":(\{[^}]*\})/.exec(text)![1]!) as Route;
  const evidence = await (await fetch(`${gateway.url}/api/v1/evidence/${failed.evidence_id}`, { headers: { authorization: `Bearer ${secret}` } })).json() as { svc_route: Route; outcome: string };
  assert.equal(evidence.svc_route.provider, 'svc-node@node-b');
  assert.equal(evidence.outcome, 'failed');

  // No node left alive: the gateway's own engine serves, and says why.
  const local = await routeOf(await chat(gateway.url, secret));
  assert.equal(local.provider, 'svc-llama.cpp');
  assert.equal(local.fallback_reason, 'node_failed:node-b:upstream_unavailable');
  await waitFor(() => gateway.logs.some((l) => l.msg === 'inference node node-a joined'), 'the join in the gateway log');
});

test('replicas on PostgreSQL and Redis: a node that beats to one replica is routed to by the other', { skip: NO_SERVICES }, async (t) => {
  const { schema, drop } = freshPostgresSchema();
  const storeDir = mkdtempSync(join(tmpdir(), 'svc-nodes-replicas-'));
  const store = await openHostedStore({ dataDir: storeDir, databaseUrl: TEST_DATABASE_URL, schema });
  t.after(async () => {
    await store.close();
    await drop();
    rmSync(storeDir, { recursive: true, force: true });
  });
  const account = await store.createAccount({ name: 'replicas', plan: { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
  const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  // Its own Redis prefix: nothing shared with other tests on this Redis.
  const shared = ['--database-url', url, '--redis-url', TEST_REDIS_URL, '--redis-key-prefix', `svc:test:${randomBytes(4).toString('hex')}:`];
  const dirs = [mkdtempSync(join(tmpdir(), 'svc-nodes-r1-')), mkdtempSync(join(tmpdir(), 'svc-nodes-r2-'))];
  t.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const [one, two] = await Promise.all(dirs.map((d) => startGateway(t, d, shared)));
  assert.ok(one!.logs.some((l) => l.node_registry === 'redis'));
  await startNode(t, one!.url, a.token, energyCounter(t));
  const route = await routeOf(await chat(two!.url, secret));
  assert.equal(route.provider, 'svc-node@node-a', 'the other replica reads the registration from Redis');
  assert.equal(typeof route.raw_joules, 'number');
});

test('Redis unreachable: the gateway starts, heartbeats answer 503 nodes_unavailable, and chat falls past the nodes backend with the reason', async (t) => {
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-no-redis');
  const gateway = await startGateway(t, dataDir, ['--redis-url', `redis://127.0.0.1:${await freePort()}`]);
  const beat = await fetch(`${gateway.url}/api/nodes/heartbeat`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` },
    body: JSON.stringify({ advertise_url: 'http://127.0.0.1:1', call_token: 'c'.repeat(43), models: [{ id: 'tiny' }], load: { active: 0, waiting: 0, slots: 1 }, energy_source: null }),
  });
  assert.equal(beat.status, 503);
  assert.equal((await beat.json() as { error: { code: string } }).error.code, 'nodes_unavailable');
  const route = await routeOf(await chat(gateway.url, secret));
  assert.equal(route.provider, 'svc-llama.cpp');
  assert.equal(route.fallback_reason, 'backend_error:node_registry_unavailable');
});
