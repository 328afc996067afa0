import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { runSolveCommand, type SolveIo } from '../../src/cli/solve-command.ts';
import { solveRoutes } from '../../src/quantum/solve-routes.ts';
import { SolveService } from '../../src/quantum/solve-service.ts';
import { installOpenAIErrorHandler } from '../../src/http/openai-error-handler.ts';
import { patternProblem, portfolioProblem, routeProblem } from '../quantum/fixtures.ts';

function io(files: Record<string, string>): SolveIo & { stdout: string; stderr: string } {
  const result = {
    stdout: '',
    stderr: '',
    out: (t: string) => {
      result.stdout += t;
    },
    err: (t: string) => {
      result.stderr += t;
    },
    readInput: async (f: string) => {
      const text = files[f];
      if (text === undefined) throw new Error(`ENOENT: no such file '${f}'`);
      return text;
    },
  };
  return result;
}

describe('svc solve', () => {
  let app: FastifyInstance;
  let service: SolveService;
  let url: string;
  before(async () => {
    service = new SolveService({ workers: 2 });
    app = Fastify();
    installOpenAIErrorHandler(app);
    await app.register(solveRoutes, { prefix: '/api', service });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app.close();
    await service.close();
  });

  it('sends a problem to the daemon and prints a readable answer', async () => {
    const t = io({ 'route.json': JSON.stringify({ solver: 'qaoa', problem: routeProblem(3) }) });
    assert.equal(await runSolveCommand('route.json', { url, seed: 3 }, t), 0, t.stderr);
    assert.match(t.stdout, /^qj_\S+ {2}qaoa on local: completed in \d+ ms/);
    assert.match(t.stdout, /route: depot → . → . → . → depot {2}\(\d+(\.\d+)? km\)/);
    assert.match(t.stdout, /optimality gap vs exact classical optimum: 0/);
  });

  it('prints raw JSON with --json and sends batches (by flag or by a problems array)', async () => {
    const t = io({ 'b.json': JSON.stringify({ solver: 'grover', problems: [patternProblem(8, 3), patternProblem(8, 7)] }) });
    assert.equal(await runSolveCommand('b.json', { url, json: true }, t), 0, t.stderr);
    const body = JSON.parse(t.stdout);
    assert.match(body.id, /^qb_/);
    assert.deepEqual(body.results.map((r: { solution: { target_index: number } }) => r.solution.target_index), [3, 7]);
    const t2 = io({ 'p.json': JSON.stringify({ solver: 'grover', problem: [patternProblem(8, 1)] }) });
    assert.equal(await runSolveCommand('p.json', { url, batch: true }, t2), 0, t2.stderr);
    assert.match(t2.stdout, /grover batch on local: 1 problems/);
  });

  it('prints a batch with a failed problem in full and exits 1', async () => {
    const t = io({ 'b.json': JSON.stringify({ solver: 'grover', problems: [patternProblem(8, 3), { ...patternProblem(16, 3), search_space_size: 8 }] }) });
    assert.equal(await runSolveCommand('b.json', { url }, t), 1, t.stderr);
    assert.match(t.stdout, /grover batch on local: 2 problems, completed in \d+ ms \(1 failed\)/);
    assert.match(t.stdout, /\[0\]\n {2}method: grover/);
    assert.match(t.stdout, /\[1\]\n {2}FAILED invalid_problem \(problems\.1\.search_space_size\): /);
  });

  it('solves in-process with --local, reproducibly with --seed', async () => {
    const files = { 'q.json': JSON.stringify({ solver: 'qubo', problem: portfolioProblem() }) };
    const a = io(files);
    const b = io(files);
    assert.equal(await runSolveCommand('q.json', { url: 'http://127.0.0.1:1', local: true, json: true, seed: 5 }, a), 0, a.stderr);
    assert.equal(await runSolveCommand('q.json', { url: 'http://127.0.0.1:1', local: true, json: true, seed: 5 }, b), 0, b.stderr);
    assert.deepEqual(JSON.parse(a.stdout).solution, JSON.parse(b.stdout).solution);
    assert.deepEqual(JSON.parse(a.stdout).solution.selected.sort(), ['BBB', 'CCC', 'FFF']);
  });

  it('reports refusals with their status and exits 1; bad files exit 2', async () => {
    const t = io({ 'x.json': JSON.stringify({ solver: 'annealer', problem: {} }) });
    assert.equal(await runSolveCommand('x.json', { url }, t), 1);
    assert.match(t.stderr, /HTTP 400 unknown_solver: Unknown solver "annealer"/);
    const local = io({ 'x.json': JSON.stringify({ solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle' }) });
    assert.equal(await runSolveCommand('x.json', { url, local: true }, local), 1);
    assert.match(local.stderr, /503 substrate_unavailable/);
    const bad = io({ 'bad.json': '{"solver":' });
    assert.equal(await runSolveCommand('bad.json', { url }, bad), 2);
    assert.match(bad.stderr, /cannot use bad.json/);
    assert.equal(await runSolveCommand('missing.json', { url }, bad), 2);
  });

  it('says so when no daemon is running', async () => {
    const t = io({ 'r.json': JSON.stringify({ solver: 'qaoa', problem: routeProblem(2) }) });
    assert.equal(await runSolveCommand('r.json', { url: 'http://127.0.0.1:9' }, t), 1);
    assert.match(t.stderr, /no svc daemon answers at http:\/\/127\.0\.0\.1:9.*--local/);
  });
});

describe('svc solve --local errors', () => {
  it('prints the cause of an internal error instead of a bare "internal error"', async () => {
    const { describeError } = await import('../../src/cli/solve-command.ts');
    const { ApiError } = await import('../../src/shared/api-error.ts');
    const wrapped = new ApiError({ status: 500, type: 'server_error', code: 'internal_error', message: 'Internal server error.', cause: new Error('worker blew up: x is undefined') });
    assert.match(describeError(wrapped), /^500 internal_error: Internal server error\.\ncause: Error: worker blew up: x is undefined/);
    assert.match(describeError(new RangeError('bad angle')), /^internal error: RangeError: bad angle/);
    assert.equal(describeError(ApiError.unprocessable('Invalid x', 'problem.x')), '422 invalid_problem: Invalid x');
  });
});
