import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkRouteConfig, RouteConfigError } from '../../../src/hosted/routing/load-route-config.ts';
import { RouteExecutor } from '../../../src/hosted/routing/route-executor.ts';
import { planRoute } from '../../../src/hosted/routing/route-planner.ts';
import { routeConfigSchema, type RouteConfig } from '../../../src/hosted/route-config.ts';
import { MemoryNodeRegistry } from '../../../src/hosted/nodes/node-registry.ts';
import { NodePool } from '../../../src/hosted/nodes/node-pool.ts';
import { NODE_ENERGY_PATH } from '../../../src/hosted/nodes/node-heartbeat.ts';
import { contentChunk, finishChunk, sse, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.ts';

const energy = { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.5, joules_per_second: 0 };
const hello = sse([contentChunk('Hel'), contentChunk('lo'), finishChunk('stop'), { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } }, '[DONE]']);
const CALL_TOKEN = 'c'.repeat(43);

let node: ScriptedUpstream;
let fixed: ScriptedUpstream;
before(async () => {
  // A stand-in for a node listener: chat answers, and its energy path says 1.5 J for whatever id it is asked.
  node = await startScriptedUpstream((req, res) => {
    if (req.url.startsWith(NODE_ENERGY_PATH)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ raw_joules: 1.5 }));
      return;
    }
    void hello(req, res);
  });
  fixed = await startScriptedUpstream(hello);
});
after(async () => {
  await node.close();
  await fixed.close();
});

function config(): RouteConfig {
  return checkRouteConfig(routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: 'chat', family: 'chat' }],
    backends: [
      { id: 'gpus', kind: 'nodes', sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'svc-node', models: { chat: 'tiny' }, energy },
      { id: 'static', kind: 'upstream', upstream: { base_url: fixed.baseUrl }, sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'vllm', models: { chat: 'm' }, energy },
    ],
    routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['gpus', 'static'] }],
  }));
}

async function run(registry: MemoryNodeRegistry) {
  const executor = new RouteExecutor({ env: {}, nodes: new NodePool(registry) });
  try {
    const plan = planRoute(config(), { model: 'chat', plan: { enterprise: false } });
    return await executor.execute({ plan, messages: [{ role: 'user', content: 'hi' }], options: {}, onPart: () => {} });
  } finally {
    await executor.close();
  }
}

describe('a nodes backend in a route beside a static upstream', () => {
  it('runs on the live node with its call token and request id, names it, and takes its measured Joules', async () => {
    const registry = new MemoryNodeRegistry();
    await registry.put({ id: 'gpu-1', expiresAt: Date.now() + 60_000, heartbeat: { advertise_url: node.baseUrl.replace(/\/v1$/, ''), call_token: CALL_TOKEN, models: [{ id: 'tiny' }], load: { active: 0, waiting: 0, slots: 1 }, energy_source: 'nvml' } });
    const result = await run(registry);
    assert.equal(result.route.provider, 'svc-node@gpu-1');
    assert.equal(result.backend, 'gpus@gpu-1');
    assert.equal(result.route.raw_joules, 1.5);
    assert.equal(result.route.fallback, false);
    const chat = node.requests.find((r) => r.url === '/v1/chat/completions')!;
    assert.equal(chat.headers.authorization, `Bearer ${CALL_TOKEN}`);
    assert.equal((chat.body as { model: string }).model, 'tiny');
    const id = chat.headers['x-svc-node-request-id'];
    assert.ok(node.requests.some((r) => r.url === `${NODE_ENERGY_PATH}/${String(id)}`), 'the energy is asked for by the request\'s id');
  });

  it('with no live node the static upstream serves, and the evidence says why', async () => {
    const result = await run(new MemoryNodeRegistry());
    assert.equal(result.route.provider, 'vllm');
    assert.equal(result.route.fallback_reason, 'no_live_node');
    assert.equal(result.route.raw_joules, null);
  });

  it('a nodes backend with an upstream table is a configuration error', () => {
    const bad = routeConfigSchema.parse({
      default_policy: 'supercomputer-fast',
      models: [{ id: 'chat', family: 'chat' }],
      backends: [{ id: 'gpus', kind: 'nodes', upstream: { base_url: 'http://x/v1' }, sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'p', models: { chat: 'm' }, energy }],
      routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['gpus'] }],
    });
    assert.throws(() => checkRouteConfig(bad), RouteConfigError);
  });
});
