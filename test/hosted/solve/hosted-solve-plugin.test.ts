import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { HostedStore } from '../../../src/accounts/hosted-store.ts';
import type { KeyScope } from '../../../src/accounts/key-store.ts';
import type { Plan } from '../../../src/accounts/plan.ts';
import { hostedSolvePlugin } from '../../../src/hosted/solve/hosted-solve-plugin.ts';
import { SolveService, UNCONFIGURED_HARDWARE, type SolveServiceOptions } from '../../../src/quantum/solve-service.ts';
import { buildTestHostedApp, FREE_PLAN } from '../../helpers/hosted-app-fixture.ts';
import { patternProblem, portfolioProblem } from '../../quantum/fixtures.ts';
import { startMockQuantumProvider } from '../../helpers/mock-quantum-provider.ts';
import { createHardwareSubstrate, resolveHardwareConfig } from '../../../src/quantum/hardware/hardware-config.ts';

interface Fixture {
  app: FastifyInstance;
  store: HostedStore;
  /** How often the hardware substrate was consulted. */
  hardwareCalls: () => number;
  key(plan?: Partial<Plan>, scope?: KeyScope): Promise<string>;
}

async function build(t: TestContext, options: SolveServiceOptions = {}): Promise<Fixture> {
  let calls = 0;
  // The default (unconfigured) substrate, counted: it is what an enterprise request reaches.
  const service = new SolveService({ workers: 1, ...options, hardware: { ...UNCONFIGURED_HARDWARE, admit: (problems) => { calls++; UNCONFIGURED_HARDWARE.admit(problems); } } });
  t.after(() => service.close());
  const { app, store } = await buildTestHostedApp(t, { apiPlugins: [hostedSolvePlugin({ service })] });
  return {
    app, store, hardwareCalls: () => calls,
    async key(plan = {}, scope = 'developer_runtime') {
      const account = await store.createAccount({ name: 'solver', plan: { ...FREE_PLAN, ...plan } });
      return (await store.issueKey(account.id, { scope })).secret;
    },
  };
}

function post(app: FastifyInstance, url: string, payload: unknown, secret?: string) {
  return app.inject({ method: 'POST', url, payload: payload as object, headers: secret === undefined ? {} : { authorization: `Bearer ${secret}` } });
}

function assertEnvelope(res: { statusCode: number; json: () => unknown; body: string }, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(body.error.docs_url, `/docs/hosted#${code}`);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.type, 'string');
  return body.error;
}

test('solves need a key: none, a malformed one and a revoked one are refused before any work', async (t) => {
  const f = await build(t);
  assertEnvelope(await post(f.app, '/api/solve', { solver: 'grover', problem: patternProblem(8, 3) }), 401, 'svc_api_key_required');
  assertEnvelope(await post(f.app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(8, 3)] }, 'not-a-key'), 401, 'svc_api_key_required');
  const account = await f.store.createAccount({ name: 'gone', plan: FREE_PLAN });
  const issued = await f.store.issueKey(account.id, { scope: 'developer_runtime' });
  await f.store.revokeKey(account.id, issued.key.id);
  assertEnvelope(await post(f.app, '/api/solve', { solver: 'grover', problem: patternProblem(8, 3) }, issued.secret), 401, 'svc_api_key_revoked');
});

test('any valid key solves on the simulator: single and batch', async (t) => {
  const f = await build(t);
  for (const scope of ['developer_runtime', 'supercomputer'] as const) {
    const secret = await f.key({}, scope);
    const one = await post(f.app, '/api/solve', { solver: 'grover', problem: patternProblem(16, 5), shots: 128, seed: 7 }, secret);
    assert.equal(one.statusCode, 200, one.body);
    const body = one.json<{ solver: string; substrate: string; status: string; solution: Record<string, unknown> }>();
    assert.equal(body.solver, 'grover');
    assert.equal(body.substrate, 'local');
    assert.equal(body.status, 'completed');
    const batch = await post(f.app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(8, 2), patternProblem(8, 6)], shots: 64 }, secret);
    assert.equal(batch.statusCode, 200, batch.body);
    const results = batch.json<{ results: { index: number; status: string }[] }>().results;
    assert.deepEqual(results.map((r) => [r.index, r.status]), [[0, 'completed'], [1, 'completed']]);
  }
  assert.equal(f.hardwareCalls(), 0);
});

test('a failed batch item carries the hosted envelope, as a failed single solve does', async (t) => {
  const f = await build(t);
  const secret = await f.key();
  const tooSmall = { ...patternProblem(16, 3), search_space_size: 8 };
  const alone = assertEnvelope(await post(f.app, '/api/solve', { solver: 'grover', problem: tooSmall }, secret), 422, 'invalid_problem');
  const batch = await post(f.app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(8, 2), tooSmall] }, secret);
  assert.equal(batch.statusCode, 200, batch.body);
  const [done, failed] = batch.json<{ results: { status: string; error?: Record<string, unknown> }[] }>().results;
  assert.equal(done?.status, 'completed');
  assert.equal(failed?.status, 'failed');
  assert.deepEqual(Object.keys(failed.error!).sort(), Object.keys(alone).sort());
  assert.equal(failed.error!['docs_url'], '/docs/hosted#invalid_problem');
});

test('vendor-eagle without an enterprise plan: 403 before the hardware substrate is consulted', async (t) => {
  const f = await build(t);
  const paid = await f.key({ hostedEntitlement: true, monthlyJouleAllowance: 1000 }, 'supercomputer');
  const free = await f.key();
  for (const secret of [paid, free]) {
    const one = assertEnvelope(await post(f.app, '/api/solve', { solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle' }, secret), 403, 'enterprise_plan_required');
    assert.equal(one.type, 'permission_error');
    assertEnvelope(await post(f.app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(8, 1)], substrate: 'vendor-eagle' }, secret), 403, 'enterprise_plan_required');
  }
  assert.equal(f.hardwareCalls(), 0);
  // An invalid body is still a 400/422 first: the substrate is only known once the body is valid.
  assertEnvelope(await post(f.app, '/api/solve', { solver: 'nope', problem: {}, substrate: 'vendor-eagle' }, free), 400, 'unknown_solver');
  assert.equal(f.hardwareCalls(), 0);
});

test('vendor-eagle with an enterprise plan reaches the substrate: the contract\'s 503 while no hardware is configured', async (t) => {
  const f = await build(t);
  const secret = await f.key({ enterprise: true });
  const error = assertEnvelope(await post(f.app, '/api/solve', { solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle' }, secret), 503, 'substrate_unavailable');
  // A documented 5xx keeps its words: the caller learns to retry on `local`.
  assert.match(String(error.message), /local/);
  assert.equal(f.hardwareCalls(), 1);
  assertEnvelope(await post(f.app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(8, 1)], substrate: 'vendor-eagle' }, secret), 503, 'substrate_unavailable');
  assert.equal(f.hardwareCalls(), 2);
});

test('solve errors keep their contract statuses in the hosted envelope', async (t) => {
  const f = await build(t);
  const secret = await f.key();
  assertEnvelope(await post(f.app, '/api/solve', { solver: 'annealer', problem: patternProblem(8, 1) }, secret), 400, 'unknown_solver');
  assertEnvelope(await post(f.app, '/api/solve/batch', { solver: 'grover', problems: Array.from({ length: 11 }, () => patternProblem(4, 1)) }, secret), 413, 'batch_too_large');
  assertEnvelope(await post(f.app, '/api/solve', { solver: 'grover', problem: { records: 'many' } }, secret), 422, 'invalid_problem');
  const malformed = await f.app.inject({ method: 'POST', url: '/api/solve', payload: '{"solver":', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
  assertEnvelope(malformed, 400, 'invalid_json');
  // A problem over 1 MB: 413, parsed off the event loop and refused before it runs.
  const big = { solver: 'grover', problem: { ...patternProblem(8, 1), padding: 'x'.repeat(1_100_000) } };
  assertEnvelope(await post(f.app, '/api/solve', big, secret), 413, 'problem_too_large');
});

test('a full solve queue is 429 solve_queue_full with retry_after_seconds and Retry-After', async (t) => {
  const f = await build(t, { workers: 1, maxQueue: 0 });
  const secret = await f.key();
  const slow = { solver: 'grover', problem: patternProblem(4096, 100), shots: 4096 };
  const answers = await Promise.all(Array.from({ length: 4 }, () => post(f.app, '/api/solve', slow, secret)));
  const limited = answers.filter((a) => a.statusCode === 429);
  assert.ok(answers.some((a) => a.statusCode === 200), answers.map((a) => a.statusCode).join(','));
  assert.ok(limited.length > 0, answers.map((a) => a.statusCode).join(','));
  for (const answer of limited) {
    const error = assertEnvelope(answer, 429, 'solve_queue_full');
    assert.equal(error.type, 'rate_limit_error');
    assert.ok(Number(error.retry_after_seconds) >= 1);
    assert.ok(Number(answer.headers['retry-after']) >= 1);
  }
});

test('vendor-eagle with an enterprise plan and a configured provider: solved on the provider; without the plan still 403', async (t) => {
  const provider = await startMockQuantumProvider({ token: 'hosted-quantum-token' });
  t.after(() => provider.close());
  const config = resolveHardwareConfig({ quantumProvider: provider.url, quantumBackend: 'ibm_brisbane', quantumPoll: '20ms' });
  const service = new SolveService({ workers: 1, hardware: createHardwareSubstrate(config, { SVC_QUANTUM_TOKEN: 'hosted-quantum-token' }) });
  t.after(() => service.close());
  const { app, store } = await buildTestHostedApp(t, { apiPlugins: [hostedSolvePlugin({ service })] });
  const keyFor = async (enterprise: boolean) => {
    const account = await store.createAccount({ name: 'quantum', plan: { ...FREE_PLAN, enterprise } });
    return (await store.issueKey(account.id, { scope: 'supercomputer' })).secret;
  };
  const res = await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(16, 7), substrate: 'vendor-eagle', seed: 1 }, await keyFor(true));
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { substrate: string; solution: { target_index: number; hardware: { jobs: { provider_job_id: string }[] } } };
  assert.equal(body.substrate, 'vendor-eagle');
  assert.equal(body.solution.target_index, 7);
  assert.equal(body.solution.hardware.jobs[0]!.provider_job_id, provider.jobs[0]!.id);
  assertEnvelope(await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(16, 7), substrate: 'vendor-eagle' }, await keyFor(false)), 403, 'enterprise_plan_required');
  assert.equal(provider.jobs.length, 1);
});

test('a failed hardware job on the hosted tier: 502 substrate_job_failed in fixed words, no provider origin, job id or reason', async (t) => {
  const provider = await startMockQuantumProvider({ token: 'hosted-quantum-token', behaviour: 'fail' });
  t.after(() => provider.close());
  const config = resolveHardwareConfig({ quantumProvider: provider.url, quantumBackend: 'ibm_brisbane', quantumPoll: '20ms' });
  const service = new SolveService({ workers: 1, hardware: createHardwareSubstrate(config, { SVC_QUANTUM_TOKEN: 'hosted-quantum-token' }) });
  t.after(() => service.close());
  const { app, store } = await buildTestHostedApp(t, { apiPlugins: [hostedSolvePlugin({ service })] });
  const account = await store.createAccount({ name: 'quantum', plan: { ...FREE_PLAN, enterprise: true } });
  const secret = (await store.issueKey(account.id, { scope: 'supercomputer' })).secret;
  const hidden = (message: string): void => {
    assert.doesNotMatch(message, /127\.0\.0\.1|job-\d|qubit 3|not operational/);
    assert.match(message, /hardware job failed/);
  };
  const one = assertEnvelope(await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(16, 7), substrate: 'vendor-eagle', seed: 1 }, secret), 502, 'substrate_job_failed');
  hidden(one.message as string);
  const batch = await post(app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(16, 7)], substrate: 'vendor-eagle', seed: 1 }, secret);
  assert.equal(batch.statusCode, 200, batch.body);
  const item = (batch.json() as { results: { status: string; error: { code: string; message: string } }[] }).results[0]!;
  assert.equal(item.error.code, 'substrate_job_failed');
  hidden(item.error.message);
});
