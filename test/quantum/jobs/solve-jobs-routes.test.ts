import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installOpenAIErrorHandler } from '../../../src/http/openai-error-handler.ts';
import { SqliteSolveJobStore } from '../../../src/quantum/jobs/solve-job-store.ts';
import { solveJobsRoutes } from '../../../src/quantum/jobs/solve-jobs-routes.ts';
import { SolveJobs } from '../../../src/quantum/jobs/solve-jobs.ts';
import { solveRoutes } from '../../../src/quantum/solve-routes.ts';
import { SolveService } from '../../../src/quantum/solve-service.ts';
import { patternProblem, portfolioOf, portfolioProblem } from '../fixtures.ts';

async function build(service: SolveService, jobs: SolveJobs): Promise<FastifyInstance> {
  const app = Fastify();
  installOpenAIErrorHandler(app);
  await app.register(solveRoutes, { prefix: '/api', service });
  await app.register(solveJobsRoutes, { prefix: '/api', jobs });
  await app.ready();
  return app;
}

const post = (app: FastifyInstance, payload: unknown) => app.inject({ method: 'POST', url: '/api/solve/jobs', payload: payload as object });

/** Polls the job until `done` holds (the test's own timeout bounds it). */
async function until(app: FastifyInstance, id: string, done: (job: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const job = (await app.inject({ method: 'GET', url: `/api/solve/jobs/${id}` })).json() as Record<string, unknown>;
    if (done(job)) return job;
    await delay(20);
  }
}

const finished = (job: Record<string, unknown>) => ['completed', 'failed', 'cancelled'].includes(job.status as string);

describe('/api/solve/jobs on the local daemon', () => {
  let dir: string;
  let service: SolveService;
  let store: SqliteSolveJobStore;
  let jobs: SolveJobs;
  let app: FastifyInstance;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
    service = new SolveService({ workers: 1 });
    store = new SqliteSolveJobStore(join(dir, 'solve-jobs.db'));
    jobs = await SolveJobs.open({ service, store });
    app = await build(service, jobs);
  });
  after(async () => {
    await app.close();
    await jobs.close();
    await store.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 202 queued at once, then the solve envelope unchanged inside the completed job', async () => {
    const res = await post(app, { solver: 'qubo', problem: portfolioProblem(), seed: 4 });
    assert.equal(res.statusCode, 202, res.body);
    const submitted = res.json();
    assert.match(submitted.id, /^qjob_[A-Za-z0-9]{24}$/);
    assert.ok(['queued', 'running'].includes(submitted.status));
    assert.equal(res.headers.location, `/api/solve/jobs/${submitted.id}`);
    const job = await until(app, submitted.id, finished);
    assert.equal(job.status, 'completed');
    const result = job.result as Record<string, unknown>;
    const direct = (await app.inject({ method: 'POST', url: '/api/solve', payload: { solver: 'qubo', problem: portfolioProblem(), seed: 4 } })).json();
    assert.match(result.id as string, /^qj_/);
    assert.equal(result.status, 'completed');
    assert.deepEqual(result.solution, direct.solution);
    assert.deepEqual(Object.keys(result).sort(), Object.keys(direct).sort());
    assert.ok(typeof job.expires_at === 'number' && job.expires_at > (job.finished_at as number));
  });

  it('runs a batch job and reports the batch response', async () => {
    const res = await post(app, { solver: 'grover', batch: true, problem: [patternProblem(16, 3), patternProblem(16, 5)], seed: 1 });
    assert.equal(res.statusCode, 202, res.body);
    const job = await until(app, res.json().id, finished);
    assert.equal(job.status, 'completed');
    const result = job.result as { results: { index: number; status: string }[] };
    assert.deepEqual(result.results.map((r) => [r.index, r.status]), [[0, 'completed'], [1, 'completed']]);
  });

  it('a client_job_id is idempotent: the same request gives the same job, a different one 409', async () => {
    const body = { solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'order-17' };
    const first = await post(app, body);
    assert.equal(first.statusCode, 202);
    const again = await post(app, body);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().id, first.json().id);
    assert.equal(again.json().client_job_id, 'order-17');
    const other = await post(app, { ...body, shots: 64 });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().error.code, 'client_job_id_conflict');
    await until(app, first.json().id, finished);
  });

  it('refuses bad input in the envelope before queueing anything', async () => {
    const cases: [unknown, number, string][] = [
      [{ solver: 'grover', problem: patternProblem(8, 3), shot: 10 }, 400, 'unknown_parameter'],
      [{ solver: 'grover', problem: patternProblem(8, 3), shots: 10_000_000 }, 400, 'invalid_request'],
      [{ solver: 'nope', problem: {} }, 400, 'unknown_solver'],
      [{ solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'has space' }, 400, 'invalid_client_job_id'],
      [{ solver: 'grover', problem: patternProblem(8, 3), client_job_id: 7 }, 400, 'invalid_client_job_id'],
      [[1, 2], 400, 'invalid_request'],
      [{ solver: 'grover', problem: { type: 'pattern_search' } }, 422, ''],
      [{ solver: 'grover', problem: patternProblem(8, 3), substrate: 'vendor-eagle' }, 503, 'substrate_unavailable'],
    ];
    const before = jobs.counts;
    for (const [body, status, code] of cases) {
      const res = await post(app, body);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      const { error } = res.json();
      assert.equal(typeof error.message, 'string');
      if (code !== '') assert.equal(error.code, code, res.body);
    }
    assert.deepEqual(jobs.counts, before);
  });

  it('unknown, malformed and over-long ids are 404 solve_job_not_found for GET, events and DELETE', async () => {
    for (const id of ['qjob_AAAAAAAAAAAAAAAAAAAAAAAA', 'x', '%E2%9C%93', 'a'.repeat(90), '__proto__', 'constructor']) {
      for (const [method, url] of [['GET', `/api/solve/jobs/${id}`], ['GET', `/api/solve/jobs/${id}/events`], ['DELETE', `/api/solve/jobs/${id}`]] as const) {
        const res = await app.inject({ method, url });
        assert.equal(res.statusCode, 404, `${method} ${url.slice(0, 60)}: ${res.body.slice(0, 200)}`);
        assert.equal(res.json().error.code, 'solve_job_not_found');
      }
    }
  });

  it('hostile bodies are answered 4xx in the envelope, never 5xx, and queue nothing', async () => {
    const before = jobs.counts;
    const bodies: [string, string][] = [
      ['application/json', ''], ['application/json', 'null'], ['application/json', '"text"'], ['application/json', '{"solver":'],
      ['application/json', '[]'], ['application/json', '{"__proto__":{"x":1},"solver":"grover","problem":{}}'],
      ['application/json', `{"solver":"grover","problem":${'['.repeat(5000)}${']'.repeat(5000)}}`],
      ['application/json', '{"solver":"grover","problem":{"type":"pattern_search"},"client_job_id":"x".repeat(200)}'],
      ['application/json', JSON.stringify({ solver: 'grover', problem: patternProblem(8, 3), client_job_id: 'a'.repeat(129) })],
      ['application/json', JSON.stringify({ solver: 'grover', problem: patternProblem(8, 3), shots: -1 })],
      ['application/json', JSON.stringify({ solver: 'grover', problem: patternProblem(8, 3), seed: 1.5 })],
      ['text/plain', 'hello'],
    ];
    for (const [type, payload] of bodies) {
      const res = await app.inject({ method: 'POST', url: '/api/solve/jobs', headers: { 'content-type': type }, payload });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${payload.slice(0, 60)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.equal(typeof res.json().error.message, 'string');
    }
    assert.deepEqual(jobs.counts, before);
  });

  it('cancels a running simulation: its worker thread is stopped, and the next job runs', async () => {
    // 22 qubits on one worker: long enough to be running when the DELETE comes.
    const res = await post(app, { solver: 'qubo', problem: portfolioOf(22, 3), shots: 65536 });
    const id = res.json().id as string;
    await until(app, id, (job) => job.status === 'running');
    await until(app, id, () => service.load.running === 1);
    const cancelled = await app.inject({ method: 'DELETE', url: `/api/solve/jobs/${id}` });
    assert.equal(cancelled.statusCode, 200);
    assert.equal(cancelled.json().status, 'cancelled');
    assert.equal(cancelled.json().error.code, 'solve_job_cancelled');
    // The simulation no longer holds the pool: the worker was terminated, not left to finish.
    while (service.load.running > 0) await delay(10);
    const next = await post(app, { solver: 'grover', problem: patternProblem(8, 3) });
    assert.equal((await until(app, next.json().id, finished)).status, 'completed');
    // Cancelling again answers the job as it is; the outcome stays cancelled.
    const again = await app.inject({ method: 'DELETE', url: `/api/solve/jobs/${id}` });
    assert.equal(again.json().status, 'cancelled');
  });

  it('streams queued → running → completed as Server-Sent Events', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await post(app, { solver: 'qubo', problem: portfolioProblem() });
    const id = res.json().id as string;
    const stream = await fetch(`${address}/api/solve/jobs/${id}/events`);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const text = await stream.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    assert.equal(events.at(-1), 'completed', text);
    const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { status: string; result?: unknown });
    assert.equal(data.at(-1)!.status, 'completed');
    assert.ok(data.at(-1)!.result !== undefined);
    // Each event names the status it carries, and the statuses only move forward.
    const order = ['queued', 'running', 'completed'];
    const seen = events.filter((e) => e !== 'progress').map((e) => order.indexOf(e!));
    assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  });
});

describe('solve jobs across a restart', () => {
  it('a job left queued or running by a stopped process runs when the next one opens, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-jobs-restart-'));
    const path = join(dir, 'solve-jobs.db');
    const service = new SolveService({ workers: 1 });
    try {
      const store = new SqliteSolveJobStore(path);
      const now = Date.now();
      const base = { owner: '', client_job_id: null, solver: 'grover', substrate: 'local', problems: 1, priority: 5, attempts: 0, created_at: now, started_at: null, finished_at: null, expires_at: null, result: null, error: null };
      const body = JSON.stringify({ solver: 'grover', problem: patternProblem(8, 3), seed: 2 });
      await store.insert({ ...base, id: 'qjob_left_queued', body, status: 'queued' });
      await store.insert({ ...base, id: 'qjob_left_running', body, status: 'running', attempts: 1, started_at: now });
      await store.close();

      const reopened = new SqliteSolveJobStore(path);
      const jobs = await SolveJobs.open({ service, store: reopened });
      for (const id of ['qjob_left_queued', 'qjob_left_running']) {
        let job = await reopened.get(id);
        while (job!.status !== 'completed') {
          await delay(20);
          job = await reopened.get(id);
        }
        assert.equal(JSON.parse(job!.result!).status, 'completed');
      }
      assert.equal((await reopened.get('qjob_left_running'))!.attempts, 2);
      // A second finish (a duplicate delivery) changes nothing.
      assert.equal(await reopened.finish('qjob_left_queued', { status: 'failed', error: '{}' }, Date.now(), Date.now()), false);
      await jobs.close();
      await reopened.close();
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a large solve job (parsed off the event loop)', () => {
  it('a body past the inline limit is split and checked on the intake worker, stored, and run', async () => {
    const { OffThread } = await import('../../../src/shared/off-thread.ts');
    const offThread = new OffThread();
    const service = new SolveService({ workers: 1, offThread });
    const store = new SqliteSolveJobStore(':memory:');
    const jobs = await SolveJobs.open({ service, store, offThread });
    const app = await build(service, jobs);
    try {
      // 4096 records of padding: about 200 KB of JSON, past the 64 KB inline limit.
      const dataset = Array.from({ length: 4096 }, (_, i) => (i === 1234 ? `id=${i} MATCH ${'x'.repeat(40)}` : `id=${i} ok ${'x'.repeat(40)}`)).join('\n');
      const problem = { type: 'pattern_search', dataset, target: { pattern: 'MATCH', min_confidence: 0.9 }, search_space_size: 4096 };
      const res = await post(app, { solver: 'grover', problem, seed: 1, client_job_id: 'big-1' });
      assert.equal(res.statusCode, 202, res.body);
      const job = await until(app, res.json().id, finished);
      assert.equal(job.status, 'completed');
      assert.equal((job.result as { solution: { target_index: number } }).solution.target_index, 1234);
      const bad = await post(app, { solver: 'grover', problem, extra: true });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'unknown_parameter');
    } finally {
      await app.close();
      await jobs.close();
      await store.close();
      await service.close();
      await offThread.close();
    }
  });
});
