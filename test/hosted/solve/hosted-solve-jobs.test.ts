import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { hostedSolvePlugin } from '../../../src/hosted/solve/hosted-solve-plugin.ts';
import { SqliteSolveJobStore } from '../../../src/quantum/jobs/solve-job-store.ts';
import { SolveJobs } from '../../../src/quantum/jobs/solve-jobs.ts';
import { SolveService } from '../../../src/quantum/solve-service.ts';
import { buildTestHostedApp, FREE_PLAN } from '../../helpers/hosted-app-fixture.ts';
import { patternProblem, portfolioOf } from '../../quantum/fixtures.ts';
import type { Plan } from '../../../src/accounts/plan.ts';

async function build(t: TestContext, corsOrigins?: string[]) {
  const service = new SolveService({ workers: 1 });
  const store = new SqliteSolveJobStore(':memory:');
  const jobs = await SolveJobs.open({ service, store });
  t.after(async () => {
    await jobs.close();
    await store.close();
    await service.close();
  });
  const { app, store: hosted } = await buildTestHostedApp(t, { apiPlugins: [hostedSolvePlugin({ service, jobs })], ...(corsOrigins === undefined ? {} : { corsOrigins }) });
  const key = async (plan: Partial<Plan> = {}) => {
    const account = await hosted.createAccount({ name: 'solver', plan: { ...FREE_PLAN, ...plan } });
    return (await hosted.issueKey(account.id, { scope: 'developer_runtime' })).secret;
  };
  return { app, jobs, key };
}

function call(app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', url: string, secret?: string, payload?: unknown) {
  return app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: secret === undefined ? {} : { authorization: `Bearer ${secret}` } });
}

function assertEnvelope(res: { statusCode: number; body: string; json: () => unknown }, status: number, code: string): void {
  assert.equal(res.statusCode, status, res.body);
  const { error } = res.json() as { error: Record<string, unknown> };
  assert.equal(error.code, code);
  assert.equal(error.docs_url, `/docs/hosted#${code}`);
}

test('hosted solve jobs need a key, belong to the account that submitted them, and answer the hosted envelope', async (t) => {
  const { app, key } = await build(t);
  const alice = await key();
  const bob = await key();
  assertEnvelope(await call(app, 'POST', '/api/solve/jobs', undefined, { solver: 'grover', problem: patternProblem(8, 3) }), 401, 'svc_api_key_required');

  const submitted = await call(app, 'POST', '/api/solve/jobs', alice, { solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'a-1' });
  assert.equal(submitted.statusCode, 202, submitted.body);
  const { id } = submitted.json() as { id: string };
  // Another account sees nothing: not the job, not its events, and cannot cancel it.
  assertEnvelope(await call(app, 'GET', `/api/solve/jobs/${id}`, bob), 404, 'solve_job_not_found');
  assertEnvelope(await call(app, 'GET', `/api/solve/jobs/${id}/events`, bob), 404, 'solve_job_not_found');
  assertEnvelope(await call(app, 'DELETE', `/api/solve/jobs/${id}`, bob), 404, 'solve_job_not_found');
  assertEnvelope(await call(app, 'GET', `/api/solve/jobs/${id}`), 401, 'svc_api_key_required');
  // The same client_job_id is the caller's own: bob's is a new job, alice's is her first one again.
  const bobs = await call(app, 'POST', '/api/solve/jobs', bob, { solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'a-1' });
  assert.equal(bobs.statusCode, 202);
  assert.notEqual((bobs.json() as { id: string }).id, id);
  assert.equal((await call(app, 'POST', '/api/solve/jobs', alice, { solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'a-1' })).statusCode, 200);

  let job: { status: string; result?: { status: string } };
  do {
    await delay(20);
    job = (await call(app, 'GET', `/api/solve/jobs/${id}`, alice)).json() as typeof job;
  } while (job.status !== 'completed' && job.status !== 'failed');
  assert.equal(job.status, 'completed');
  assert.equal(job.result?.status, 'completed');
});

test('hosted solve jobs: bad input and the hardware lane without an enterprise plan are refused at submission', async (t) => {
  const { app, key, jobs } = await build(t);
  const secret = await key();
  assertEnvelope(await call(app, 'POST', '/api/solve/jobs', secret, { solver: 'grover', problem: patternProblem(8, 3), extra: 1 }), 400, 'unknown_parameter');
  assertEnvelope(await call(app, 'POST', '/api/solve/jobs', secret, { solver: 'grover', problem: patternProblem(8, 3), substrate: 'vendor-eagle' }), 403, 'enterprise_plan_required');
  assertEnvelope(await call(app, 'GET', '/api/solve/jobs/qjob_nothing', secret), 404, 'solve_job_not_found');
  assert.deepEqual(jobs.counts, { waiting: 0, running: 0 });
});

test('a cancelled hosted job carries its error in the hosted envelope', async (t) => {
  const { app, key } = await build(t);
  const secret = await key();
  const { id } = (await call(app, 'POST', '/api/solve/jobs', secret, { solver: 'qubo', problem: portfolioOf(22, 5), shots: 65536 })).json() as { id: string };
  const res = await call(app, 'DELETE', `/api/solve/jobs/${id}`, secret);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { status: string; error: Record<string, unknown> };
  assert.equal(body.status, 'cancelled');
  assert.equal(body.error.code, 'solve_job_cancelled');
  assert.equal(body.error.docs_url, '/docs/hosted#solve_job_cancelled');
});

test('the events stream of a job carries the hosted CORS headers a browser on a listed origin needs', async (t) => {
  const { app, key } = await build(t, ['https://app.example']);
  const secret = await key();
  const headers = { authorization: `Bearer ${secret}`, origin: 'https://app.example' };
  const submitted = await app.inject({ method: 'POST', url: '/api/solve/jobs', payload: { solver: 'grover', problem: patternProblem(8, 3) }, headers });
  assert.equal(submitted.statusCode, 202, submitted.body);
  assert.equal(submitted.headers['access-control-allow-origin'], 'https://app.example');
  const { id } = submitted.json() as { id: string };
  // The stream ends by itself after the final status, so inject resolves with the whole of it.
  const events = await app.inject({ method: 'GET', url: `/api/solve/jobs/${id}/events`, headers });
  assert.equal(events.statusCode, 200);
  assert.match(String(events.headers['content-type']), /^text\/event-stream/);
  assert.equal(events.headers['access-control-allow-origin'], 'https://app.example');
  assert.match(events.body, /event: completed/);
});
