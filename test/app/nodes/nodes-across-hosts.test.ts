/**
 * Inference nodes that are hosts of their own: each `svc serve --join` runs in its own network
 * namespace (its own loopback, ports and address, linked to the gateway's host by a veth pair),
 * so the gateway reaches it only at its advertised address and it reaches the gateway only over
 * the link, as on two machines. Skipped, in one line, where namespaces cannot be made (not root).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createNodeToken } from '../../../src/hosted/nodes/node-tokens.ts';
import { startServerProcess, tinyModelPath, type DaemonProcess } from '../../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../../helpers/hosted-stores.ts';
import { namespacesUnavailable, nodeHost, type NodeHost } from '../../helpers/network-namespaces.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const SKIP = namespacesUnavailable('the inference-node test across hosts');
const a = createNodeToken('node-a');
const b = createNodeToken('node-b');
const NODE_PORT = 18_443;

async function startNode(t: TestContext, host: NodeHost, gatewayUrl: string, token: string): Promise<DaemonProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-node-host-'));
  const node = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`,
    '--join', gatewayUrl, '--advertise-url', `http://${host.address}:${NODE_PORT}`, '--node-listen', `${host.address}:${NODE_PORT}`], {
    env: { SVC_NODE_TOKEN: token }, wrap: host.wrap,
    onExit: () => rmSync(dataDir, { recursive: true, force: true }),
  });
  t.after(() => node.stop('SIGKILL'));
  await waitFor(() => node.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('joined ')), 'the node to join', { attempts: 1200 });
  return node;
}

async function providerOf(gatewayUrl: string, secret: string): Promise<{ provider: string; fallback_reason: string | null }> {
  const response = await fetch(`${gatewayUrl}/api/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }),
  });
  const body = await response.json() as { svc_route?: { provider: string; fallback_reason: string | null } };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.svc_route!;
}

test('nodes on hosts of their own: joined over the link, chats routed to them there, a killed one replaced by the other', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const hostA = nodeHost(t);
  const hostB = nodeHost(t);
  const { dataDir, secret } = await prepareHostedDataDir(t, 'nodes-hosts');
  // The gateway listens on every IPv4 address of this host: each node reaches it at its link's near end.
  const gateway = await startServerProcess(['hosted', '--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`,
    '--node-token-hash', a.entry, '--node-token-hash', b.entry, '--node-ttl', '3s', '--log-level', 'info']);
  t.after(() => gateway.stop());
  const port = new URL(gateway.url).port;
  const local = `http://127.0.0.1:${port}`;

  // A node's own loopback is not this host's: from inside, the gateway's port on 127.0.0.1 is
  // refused, and the near end of the link answers.
  const reach = (url: string) => spawnSync('ip', ['netns', 'exec', hostA.name, process.execPath, '-e',
    `fetch(${JSON.stringify(url)}).then((r) => process.exit(r.status === 200 ? 0 : 3), () => process.exit(2))`], { timeout: 20_000 }).status;
  assert.equal(reach(`${local}/api/version`), 2, 'this host\'s loopback is out of the node\'s reach');
  assert.equal(reach(`http://${hostA.hostAddress}:${port}/api/version`), 0, 'the gateway is reached over the link');

  const nodeA = await startNode(t, hostA, `http://${hostA.hostAddress}:${port}`, a.token);
  assert.equal((await providerOf(local, secret)).provider, 'svc-node@node-a', 'routed to the node across its link');
  const joined = gateway.logs.find((l) => l.node_id === 'node-a' && typeof l.advertise_url === 'string');
  assert.equal(joined?.advertise_url, `http://${hostA.address}:${NODE_PORT}`, 'the gateway knows the node by its own address');

  await startNode(t, hostB, `http://${hostB.hostAddress}:${port}`, b.token);
  // A node killed outright (its host gone): the next chat is served by the other one.
  await nodeA.stop('SIGKILL');
  const after = await providerOf(local, secret);
  assert.equal(after.provider, 'svc-node@node-b');
});
