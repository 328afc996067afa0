import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryNodeRegistry, type NodeRecord } from '../../../src/hosted/nodes/node-registry.ts';
import { NODE_DEFAULT_MODEL, NodePool } from '../../../src/hosted/nodes/node-pool.ts';

function record(id: string, load: { active: number; waiting: number; slots: number }, models = ['tiny'], expiresAt = Date.now() + 60_000): NodeRecord {
  return {
    id, expiresAt,
    heartbeat: { advertise_url: `http://127.0.0.1:1/${id}`, call_token: 'x'.repeat(43), models: models.map((m) => ({ id: m })), load, energy_source: null },
  };
}

test('least load first: reported active plus waiting over slots; ties by id; only nodes serving the model', async () => {
  const registry = new MemoryNodeRegistry();
  await registry.put(record('c', { active: 1, waiting: 0, slots: 4 }));
  await registry.put(record('a', { active: 2, waiting: 0, slots: 4 }));
  await registry.put(record('b', { active: 0, waiting: 1, slots: 4 }));
  await registry.put(record('d', { active: 0, waiting: 0, slots: 1 }, ['other']));
  const pool = new NodePool(registry);
  assert.deepEqual((await pool.candidates('tiny', 'svc-chat')).map((n) => n.nodeId), ['b', 'c', 'a']);
  assert.deepEqual((await pool.candidates('other', 'svc-chat')).map((n) => n.nodeId), ['d']);
  assert.deepEqual((await pool.candidates(NODE_DEFAULT_MODEL, 'svc-chat')).map((n) => n.nodeId), ['d', 'b', 'c', 'a'], '@default: every node, by its first model');
  assert.deepEqual(await pool.candidates('missing', 'svc-chat'), []);
});

test('expired registrations are not candidates, and leave the registry', async () => {
  const registry = new MemoryNodeRegistry();
  await registry.put(record('old', { active: 0, waiting: 0, slots: 1 }, ['tiny'], Date.now() - 1));
  await registry.put(record('new', { active: 0, waiting: 0, slots: 1 }));
  const pool = new NodePool(registry);
  assert.deepEqual((await pool.candidates('tiny', 'svc-chat')).map((n) => n.nodeId), ['new']);
  assert.deepEqual((await registry.live()).map((n) => n.id), ['new']);
});

test("this replica's own requests count as load until the node reports them; a failed node attempt releases its count", async () => {
  const registry = new MemoryNodeRegistry();
  await registry.put(record('a', { active: 0, waiting: 0, slots: 1 }));
  await registry.put(record('b', { active: 0, waiting: 0, slots: 1 }));
  const pool = new NodePool(registry, { connectTimeoutMs: 500 });
  const [first] = await pool.candidates('tiny', 'svc-chat');
  assert.equal(first!.nodeId, 'a');
  // Port 1 refuses: the attempt fails, and while it runs node a counts one request.
  const running = first!.chat([{ role: 'user', content: 'hi' }], {}).catch((error: unknown) => error);
  assert.equal(pool.inFlight('a'), 1);
  assert.deepEqual((await pool.candidates('tiny', 'svc-chat')).map((n) => n.nodeId), ['b', 'a']);
  const error = await running as { code?: string };
  assert.equal(error.code, 'upstream_unavailable');
  assert.equal(pool.inFlight('a'), 0);
  assert.equal(await first!.energy(), null, 'a node that measures nothing reports null');
});
