import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRouteConfig, defaultRouteConfig } from '../../../src/hosted/routing/load-route-config.ts';
import { parseRouteHeaders } from '../../../src/hosted/routing/route-headers.ts';
import { planRoute } from '../../../src/hosted/routing/route-planner.ts';
import { RouteRefusedError, type RouteRefusalCode } from '../../../src/hosted/routing/route-refused-error.ts';
import { routeConfigSchema, type RouteConfig } from '../../../src/hosted/route-config.ts';

const energy = { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.1, joules_per_second: 1 };
const upstream = { base_url: 'http://127.0.0.1:9/v1' };

/** Two models; `chat` served by a mesh, a shared pool and a dedicated engine; `mesh-only` by the mesh alone. */
const config: RouteConfig = checkRouteConfig(routeConfigSchema.parse({
  default_policy: 'supercomputer-fast',
  models: [{ id: 'chat', family: 'chat' }, { id: 'mesh-only', family: 'chat' }],
  backends: [
    { id: 'mesh', kind: 'upstream', upstream, sharing: 'mesh', execution_plane: 'supercomputer', provider: 'mesh', models: { chat: 'm', 'mesh-only': 'm2' }, energy },
    { id: 'pool', kind: 'upstream', upstream, sharing: 'shared', execution_plane: 'supercomputer', provider: 'pool', models: { chat: 'p' }, energy },
    { id: 'engine', kind: 'engine', sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'svc', models: { chat: '@default' }, energy },
    { id: 'ent', kind: 'engine', sharing: 'dedicated', execution_plane: 'enterprise', provider: 'svc', models: { chat: '@default' }, energy },
  ],
  routes: [
    { policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['mesh', 'pool', 'engine'] },
    { policy: 'supercomputer-deep', queue_class: 'deep', backends: ['engine', 'mesh'] },
    { policy: 'enterprise-private', queue_class: 'enterprise', backends: ['ent'], enterprise_only: true },
  ],
}));

const basic = { enterprise: false };

function refusal(fn: () => unknown, code: RouteRefusalCode, status: number): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RouteRefusedError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  });
}

describe('planRoute', () => {
  it('mesh_safe keeps every backend of the policy, in order, with its queue class', () => {
    const plan = planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: basic });
    assert.equal(plan.policy, 'supercomputer-fast');
    assert.equal(plan.queueClass, 'interactive');
    assert.deepEqual(plan.candidates.map((c) => c.backend.id), ['mesh', 'pool', 'engine']);
    assert.deepEqual(plan.candidates.map((c) => c.backendModel), ['m', 'p', '@default']);
  });

  it('personal never reaches a shared or mesh backend; it is the default tier', () => {
    for (const privacyTier of ['personal', undefined]) {
      const plan = planRoute(config, { model: 'chat', privacyTier, plan: basic });
      assert.equal(plan.privacyTier, 'personal');
      assert.deepEqual(plan.candidates.map((c) => c.backend.id), ['engine']);
    }
  });

  it('the deep policy runs in the deep queue, in its own order', () => {
    const plan = planRoute(config, { model: 'chat', policy: 'supercomputer-deep', privacyTier: 'mesh_safe', plan: basic });
    assert.equal(plan.queueClass, 'deep');
    assert.deepEqual(plan.candidates.map((c) => c.backend.id), ['engine', 'mesh']);
  });

  it('refuses personal content when only pooled backends serve the model', () => {
    refusal(() => planRoute(config, { model: 'mesh-only', privacyTier: 'personal', plan: basic }), 'no_backend_for_privacy_tier', 400);
    assert.equal(planRoute(config, { model: 'mesh-only', privacyTier: 'mesh_safe', plan: basic }).candidates.length, 1);
  });

  it('enterprise policies need an enterprise plan', () => {
    refusal(() => planRoute(config, { model: 'chat', policy: 'enterprise-private', plan: basic }), 'enterprise_plan_required', 403);
    const plan = planRoute(config, { model: 'chat', policy: 'enterprise-private', plan: { enterprise: true } });
    assert.equal(plan.queueClass, 'enterprise');
    assert.deepEqual(plan.candidates.map((c) => c.backend.id), ['ent']);
  });

  it('refuses unknown values with stable codes', () => {
    refusal(() => planRoute(config, { model: 'chat', policy: 'supercomputer-turbo', plan: basic }), 'unknown_execution_policy', 400);
    // A policy the contract knows but this configuration does not offer.
    refusal(() => planRoute(config, { model: 'chat', policy: 'enterprise-byo', plan: { enterprise: true } }), 'unknown_execution_policy', 400);
    refusal(() => planRoute(config, { model: 'chat', privacyTier: 'public', plan: basic }), 'unknown_privacy_tier', 400);
    refusal(() => planRoute(config, { model: 'gpt-9', plan: basic }), 'model_not_found', 404);
    refusal(() => planRoute(config, { model: 'constructor', plan: basic }), 'model_not_found', 404);
    refusal(() => planRoute(config, { model: 'mesh-only', policy: 'enterprise-private', plan: { enterprise: true } }), 'model_not_on_policy', 400);
  });

  it('the default configuration plans svc-chat onto the engine for personal traffic', () => {
    const plan = planRoute(defaultRouteConfig(), { model: 'svc-chat', plan: basic });
    assert.deepEqual(plan.candidates.map((c) => c.backend.id), ['engine']);
  });
});

describe('parseRouteHeaders', () => {
  it('reads the five headers', () => {
    assert.deepEqual(parseRouteHeaders({
      'x-svc-execution-policy': 'supercomputer-deep', 'x-svc-privacy-tier': 'mesh_safe', 'x-svc-project-id': 'proj-1',
      'x-svc-max-joules': '250', 'x-svc-max-latency-ms': '1500',
    }), { policy: 'supercomputer-deep', privacyTier: 'mesh_safe', projectId: 'proj-1', maxJoules: 250, maxLatencyMs: 1500 });
    assert.deepEqual(parseRouteHeaders({}), { policy: undefined, privacyTier: undefined, projectId: undefined, maxJoules: undefined, maxLatencyMs: undefined });
  });

  for (const [name, value] of [
    ['x-svc-max-joules', '-1'], ['x-svc-max-joules', '1.5'], ['x-svc-max-joules', 'lots'], ['x-svc-max-joules', '9'.repeat(40)],
    ['x-svc-max-latency-ms', '0'], ['x-svc-max-latency-ms', '1e3'], ['x-svc-project-id', 'has space'], ['x-svc-project-id', 'x'.repeat(129)],
  ] as const) {
    it(`refuses ${name}: ${value.slice(0, 20)} naming the header`, () => {
      assert.throws(() => parseRouteHeaders({ [name]: value }), (error: unknown) => {
        assert.ok(error instanceof RouteRefusedError);
        assert.equal(error.code, 'invalid_route_header');
        assert.equal(error.param, name);
        assert.ok(error.message.length < 300);
        return true;
      });
    });
  }

  it('refuses a ceiling sent twice', () => {
    assert.throws(() => parseRouteHeaders({ 'x-svc-max-joules': ['1', '2'] }), /more than once/);
  });
});
