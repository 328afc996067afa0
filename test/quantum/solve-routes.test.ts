import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installOpenAIErrorHandler } from '../../src/http/openai-error-handler.ts';
import { solveRoutes } from '../../src/quantum/solve-routes.ts';
import { SolveService, solverCapability } from '../../src/quantum/solve-service.ts';
import { patternProblem, portfolioProblem, routeProblem } from './fixtures.ts';

async function build(service: SolveService): Promise<FastifyInstance> {
  const app = Fastify();
  installOpenAIErrorHandler(app);
  app.get('/ping', async () => ({ status: 'ok' }));
  await app.register(solveRoutes, { prefix: '/api', service });
  await app.ready();
  return app;
}

const post = (app: FastifyInstance, url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as object });

describe('/api/solve and /api/solve/batch', () => {
  let service: SolveService;
  let app: FastifyInstance;
  before(async () => {
    service = new SolveService({ workers: 2 });
    app = await build(service);
  });
  after(async () => {
    await app.close();
    await service.close();
  });

  it('solves and answers in the contract shape', async () => {
    const res = await post(app, '/api/solve', { solver: 'qubo', problem: portfolioProblem() });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.match(body.id, /^qj_[A-Za-z0-9]{24}$/);
    assert.equal(body.solver, 'qubo');
    assert.equal(body.substrate, 'local');
    assert.equal(body.status, 'completed');
    assert.deepEqual(Object.keys(body.meta).sort(), ['depth', 'elapsed_ms', 'energy', 'optimal_count', 'shots']);
    assert.equal(body.meta.shots, 1024);
    assert.ok(Number.isInteger(body.meta.elapsed_ms) && Number.isInteger(body.meta.depth) && Number.isInteger(body.meta.optimal_count));
    assert.deepEqual(body.solution.selected.sort(), ['BBB', 'CCC', 'FFF']);
  });

  it('reproduces a solve with the same seed', async () => {
    const a = (await post(app, '/api/solve', { solver: 'qaoa', problem: routeProblem(3), seed: 9, shots: 512 })).json();
    const b = (await post(app, '/api/solve', { solver: 'qaoa', problem: routeProblem(3), seed: 9, shots: 512 })).json();
    assert.deepEqual(a.solution, b.solution);
    assert.equal(a.meta.optimal_count, b.meta.optimal_count);
    assert.equal(a.seed, 9);
  });

  it('measurement counts on request through the worker: bounded by counts_top_k, 422 out of range', async () => {
    const res = await post(app, '/api/solve', { solver: 'grover', problem: { ...patternProblem(16, 5), options: { include_counts: true, counts_top_k: 3 } }, seed: 2, shots: 256 });
    assert.equal(res.statusCode, 200);
    const counts = res.json().solution.measurement_counts;
    assert.ok(counts.outcomes.length <= 3);
    assert.equal(counts.outcomes[0].index, 5);
    assert.equal(counts.outcomes.reduce((s: number, o: { count: number }) => s + o.count, 0) + counts.other_count, 256);
    await expectError('/api/solve', { solver: 'grover', problem: { ...patternProblem(16, 5), options: { include_counts: true, counts_top_k: 100_000 } } }, 422, 'problem.options.counts_top_k');
  });

  it('counts options are strict: a mistyped key, counts_top_k alone and the string "true" are 422 invalid_problem naming the option', async () => {
    const asked = (options: unknown) => ({ solver: 'grover', problem: { ...patternProblem(16, 5), options } });
    await expectError('/api/solve', asked({ include_count: true }), 422, 'problem.options.include_count', 'invalid_problem');
    await expectError('/api/solve', asked({ counts_top_k: 5 }), 422, 'problem.options.counts_top_k', 'invalid_problem');
    await expectError('/api/solve', asked({ include_counts: false, counts_top_k: 5 }), 422, 'problem.options.counts_top_k', 'invalid_problem');
    await expectError('/api/solve', asked({ include_counts: 'true' }), 422, 'problem.options.include_counts', 'invalid_problem');
  });

  it('runs a batch and keeps request order', async () => {
    const needles = [5, 1, 14, 0, 9, 3];
    const res = await post(app, '/api/solve/batch', { solver: 'grover', problems: needles.map((n) => patternProblem(16, n)), shots: 256 });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.match(body.id, /^qb_/);
    assert.equal(body.status, 'completed');
    assert.ok(Number.isInteger(body.total_elapsed_ms));
    assert.deepEqual(body.results.map((r: { index: number }) => r.index), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(body.results.map((r: { solution: { target_index: number } }) => r.solution.target_index), needles);
    for (const r of body.results) assert.equal(r.status, 'completed');
  });

  it('accepts batch: true on /api/solve with an array problem', async () => {
    const res = await post(app, '/api/solve', { solver: 'grover', batch: true, problem: [patternProblem(8, 2), patternProblem(8, 6)] });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().results.map((r: { solution: { target_index: number } }) => r.solution.target_index), [2, 6]);
  });

  const expectError = async (url: string, payload: unknown, status: number, param?: string | null, code?: string) => {
    const res = typeof payload === 'string' ? await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } }) : await post(app, url, payload);
    assert.equal(res.statusCode, status, res.body);
    const { error } = res.json();
    assert.equal(typeof error.message, 'string');
    if (param !== undefined) assert.equal(error.param, param);
    if (code !== undefined) assert.equal(error.code, code);
    return res;
  };

  /** A batch with one problem its solver refuses: 200, that item failed with the envelope's fields, the others completed. */
  const expectItemError = async (payload: { problems: unknown[] } & Record<string, unknown>, failed: number, param: string, code = 'invalid_problem') => {
    const res = await post(app, '/api/solve/batch', payload);
    assert.equal(res.statusCode, 200, res.body);
    const { results, request_counts: counts } = res.json();
    assert.deepEqual(counts, { total: payload.problems.length, completed: payload.problems.length - 1, failed: 1 });
    const item = results[failed];
    assert.equal(item.status, 'failed');
    assert.deepEqual(Object.keys(item.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(item.error.param, param);
    assert.equal(item.error.code, code);
    assert.equal(item.error.type, 'invalid_request_error');
    assert.equal(item.solution, null);
    assert.equal(item.meta, null);
    for (const r of results) if (r.index !== failed) assert.equal(r.status, 'completed');
    return res;
  };

  it('a batch answers each problem on its own: one that cannot be solved fails in its place, the others complete', async () => {
    // Item 1 passes the schema but its solver refuses it when it runs (a search space smaller
    // than the dataset); item 2 does not match the schema (no bits); items 0 and 3 are good.
    const tooSmall = { ...patternProblem(16, 3), search_space_size: 8 };
    const res = await post(app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(16, 5), tooSmall, { type: 'qrng', bits: 0 }, patternProblem(16, 11)], seed: 4 });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'completed');
    assert.deepEqual(body.request_counts, { total: 4, completed: 2, failed: 2 });
    assert.deepEqual(body.results.map((r: { status: string }) => r.status), ['completed', 'failed', 'failed', 'completed']);
    assert.equal(body.results[0].solution.target_index, 5);
    assert.equal(body.results[3].solution.target_index, 11);
    // the worker's error names the item's place in the batch, like a single solve names 'problem.…'
    const ran = body.results[1];
    assert.deepEqual(ran.error, { ...ran.error, type: 'invalid_request_error', code: 'invalid_problem', param: 'problems.1.search_space_size' });
    assert.match(ran.error.message, /at least 16/);
    assert.equal(body.results[2].error.param, 'problems.2.bits');
    // the same problem alone answers with the same envelope fields
    const alone = await post(app, '/api/solve', { solver: 'grover', problem: tooSmall });
    assert.equal(alone.statusCode, 422);
    assert.deepEqual(Object.keys(alone.json().error).sort(), Object.keys(ran.error).sort());
    assert.equal(alone.json().error.code, ran.error.code);
    // and with batch: true on /api/solve, the item is named 'problem.1.…'
    const viaSolve = await post(app, '/api/solve', { solver: 'grover', batch: true, problem: [patternProblem(8, 2), tooSmall] });
    assert.equal(viaSolve.statusCode, 200, viaSolve.body);
    assert.equal(viaSolve.json().results[1].error.param, 'problem.1.search_space_size');
    assert.equal(viaSolve.json().results[0].solution.target_index, 2);
  });

  it('a batch whose every problem fails is still answered 200, each item failed', async () => {
    const wide = Array.from({ length: 40 }, (_, i) => i);
    const tooWide = { type: 'classification', training_data: [{ features: wide, label: 'a' }, { features: wide, label: 'b' }], predict: [{ features: wide }] };
    const res = await post(app, '/api/solve/batch', { solver: 'qsvm', problems: [tooWide, { type: 'classification' }] });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.request_counts, { total: 2, completed: 0, failed: 2 });
    assert.equal(body.results[0].error.code, 'problem_too_large');
    assert.match(body.results[0].error.param, /^problems\.0\b/);
    assert.equal(body.results[1].error.code, 'invalid_problem');
    assert.match(body.results[1].error.param, /^problems\.1\./);
  });

  it('what is wrong with the batch request itself is still a request-level error', async () => {
    await expectError('/api/solve/batch', { solver: 'grover', problems: [patternProblem(4, 1), 'go'] }, 400, 'problems.1', 'invalid_problem');
    await expectError('/api/solve/batch', { solver: 'grover', problems: [] }, 400, 'problems');
    await expectError('/api/solve/batch', { solver: 'grover', problems: patternProblem(4, 1) }, 400, 'problems');
  });

  it('400: unknown solver', async () => {
    await expectError('/api/solve', { solver: 'annealer', problem: routeProblem(2) }, 400, 'solver', 'unknown_solver');
  });
  it('400: malformed JSON', async () => {
    await expectError('/api/solve', '{"solver": "qaoa", "problem": ', 400, null, 'invalid_json');
  });
  it('400: malformed problem object', async () => {
    await expectError('/api/solve', { solver: 'qaoa', problem: 'go' }, 400, 'problem');
  });
  it('400: shots over 65536', async () => {
    await expectError('/api/solve', { solver: 'qubo', problem: portfolioProblem(), shots: 65537 }, 400, 'shots');
  });
  it('413: batch over 10 problems', async () => {
    await expectError('/api/solve/batch', { solver: 'grover', problems: Array.from({ length: 11 }, () => patternProblem(4, 1)) }, 413, 'problems', 'batch_too_large');
  });
  it('413: a problem over 1 MB', async () => {
    const big = { ...patternProblem(4, 1), dataset: 'x'.repeat(1_000_001) };
    await expectError('/api/solve', { solver: 'grover', problem: big }, 413, 'problem', 'problem_too_large');
    await expectError('/api/solve/batch', { solver: 'grover', problems: [patternProblem(4, 1), big] }, 413, 'problems.1', 'problem_too_large');
  });
  it('422: schema mismatch names the field', async () => {
    const res = await expectError('/api/solve', { solver: 'qubo', problem: { ...portfolioProblem(), assets: [{ id: 'X', expected_return: 'high', risk: 0.1 }] } }, 422, 'problem.assets.0.expected_return');
    assert.match(res.json().error.message, /problem\.assets\.0\.expected_return/);
    await expectItemError({ solver: 'qaoa', problems: [routeProblem(2), { type: 'route_optimization', nodes: [] }] }, 1, 'problems.1.nodes');
    await expectError('/api/solve', { solver: 'qsvm', problem: routeProblem(2) }, 422, 'problem.type');
  });
  it('422: a problem too large for the simulator is refused cleanly', async () => {
    const wide = Array.from({ length: 40 }, (_, i) => i);
    await expectError('/api/solve', { solver: 'qsvm', problem: { type: 'classification', training_data: [{ features: wide, label: 'a' }, { features: wide, label: 'b' }], predict: [{ features: wide }] } }, 422, undefined, 'problem_too_large');
    // the service still works afterwards
    assert.equal((await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(4, 1) })).statusCode, 200);
  });
  it('503: vendor-eagle needs a hardware provider and an enterprise plan', async () => {
    const res = await expectError('/api/solve', { solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle' }, 503, 'substrate', 'substrate_unavailable');
    assert.match(res.json().error.message, /hardware provider and an enterprise plan/);
    await expectError('/api/solve/batch', { solver: 'qubo', problems: [portfolioProblem()], substrate: 'vendor-eagle' }, 503);
  });

  const PROTOTYPE_KEYS = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'prototype'];

  it('prototype keys as problem.type or solver are refused 422/400, never looked up on a prototype', async () => {
    for (const key of PROTOTYPE_KEYS) {
      await expectError('/api/solve', { solver: 'qaoa', problem: { ...routeProblem(2), type: key } }, 422, 'problem.type');
      await expectItemError({ solver: 'grover', problems: [patternProblem(4, 1), { type: key }] }, 1, 'problems.1.type');
      await expectError('/api/solve', { solver: key, problem: routeProblem(2) }, 400, 'solver', 'unknown_solver');
    }
    // The same through the large-body path (parsed and validated on the intake worker).
    const padding = 'x'.repeat(100_000);
    for (const key of PROTOTYPE_KEYS) {
      await expectError('/api/solve', { solver: 'grover', problem: { ...patternProblem(4, 1), type: key, dataset: padding } }, 422, 'problem.type');
      await expectError('/api/solve/batch', { solver: key, problems: [{ ...patternProblem(4, 1), dataset: padding }] }, 400, 'solver', 'unknown_solver');
    }
  });

  it('large bodies are parsed and validated off the event loop with the same answers', async () => {
    const big = (needle: number) => patternProblem(4000, needle);
    assert.ok(JSON.stringify(big(1)).length > 64 * 1024);
    const res = await post(app, '/api/solve/batch', { solver: 'grover', problems: [big(5), big(3999)], shots: 64, seed: 3 });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().results.map((r: { solution: { target_index: number } }) => r.solution.target_index), [5, 3999]);
    const single = await post(app, '/api/solve', { solver: 'grover', problem: big(17), shots: 64 });
    assert.equal(single.json().solution.target_index, 17);
    // defaults applied by validation survive the trip as JSON text (qrng's format defaults to base64)
    const qrng = await post(app, '/api/solve', { solver: 'grover', problem: { type: 'qrng', bits: 64 }, shots: 1, padding: 'x'.repeat(70_000) });
    assert.equal(qrng.statusCode, 200, qrng.body);
    await expectItemError({ solver: 'grover', problems: [big(1), { ...big(2), search_space_size: 'many' }] }, 1, 'problems.1.search_space_size');
    await expectError('/api/solve', `{"solver":"grover","problem":{"dataset":"${'y'.repeat(70_000)}"`, 400, null, 'invalid_json');
  });

  it('bodies nested deeper than 64 levels are 400 json_too_complex, small or large', async () => {
    for (const depth of [100, 100_000]) {
      const body = `{"solver":"qaoa","problem":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      await expectError('/api/solve', body, 400, null, 'json_too_complex');
    }
  });

  it('user input echoed in an error message is truncated', async () => {
    const res = await expectError('/api/solve', { solver: 's'.repeat(1_000_000), problem: routeProblem(2) }, 400, 'solver', 'unknown_solver');
    assert.ok(res.body.length < 2000, `error body is ${res.body.length} bytes`);
    const typed = await expectError('/api/solve', { solver: 'qaoa', problem: { ...routeProblem(2), type: 't'.repeat(500_000) } }, 422, 'problem.type');
    assert.ok(typed.body.length < 2000);
    assert.match(typed.json().error.message, /\(500000 characters\)/);
  });

  it('keeps the event loop free while a solve runs in a worker', async () => {
    const order: string[] = [];
    const solving = post(app, '/api/solve', { solver: 'qaoa', problem: routeProblem(4) }).then((r) => {
      order.push(`solve ${r.statusCode}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const ping = await app.inject({ method: 'GET', url: '/ping' });
    order.push(`ping ${ping.statusCode}`);
    await solving;
    assert.deepEqual(order, ['ping 200', 'solve 200']);
  });

  it('reports its capability for /health', () => {
    const cap = service.capability();
    assert.deepEqual(cap.solvers, ['qaoa', 'grover', 'qkmeans', 'qsvm', 'qubo']);
    assert.equal(cap.substrate, 'simulated');
    assert.equal(cap.workers, 2);
    assert.ok(cap.max_qubits >= 20 && cap.max_qubits <= 30);
    // per-solver ceilings: what is really simulated, never above the simulator's
    assert.equal(cap.solver_max_qubits['qaoa'], 16);
    assert.equal(cap.solver_max_qubits['qubo'], 24);
    assert.equal(cap.solver_max_qubits['grover'], Math.min(22, cap.max_qubits));
    assert.equal(cap.solver_max_qubits['qsvm'], Math.min(20, cap.max_qubits));
    for (const q of Object.values(cap.solver_max_qubits)) assert.ok(q <= cap.max_qubits);
    assert.deepEqual(solverCapability(3).workers, 3);
  });
});

describe('solve service', () => {
  it('runs the problems of a batch side by side on the pool', async () => {
    const service = new SolveService({ workers: 2 });
    try {
      service.warm();
      const batch = service.solveBatch({ solver: 'qaoa', problems: [routeProblem(3), routeProblem(3), routeProblem(2)] });
      assert.deepEqual(service.load, { running: 2, queued: 1 });
      const result = await batch;
      assert.deepEqual(result.results.map((r) => r.index), [0, 1, 2]);
      assert.deepEqual(service.load, { running: 0, queued: 0 });
    } finally {
      await service.close();
    }
  });

  it('stops a problem that overruns its time limit with 422 solve_time_budget_exceeded (503 is the hardware substrate\'s) and keeps serving', async () => {
    const service = new SolveService({ workers: 1, jobTimeoutMs: 1 });
    try {
      const overrun = (e: { status?: number; code?: string; param?: string }) => e.status === 422 && e.code === 'solve_time_budget_exceeded' && e.param === 'problem';
      await assert.rejects(service.solve({ solver: 'qaoa', problem: routeProblem(4) }), overrun);
      // the stopped worker was replaced: the next problem gets a fresh one (and the same limit)
      assert.deepEqual(service.load, { running: 0, queued: 0 });
      await assert.rejects(service.solve({ solver: 'qaoa', problem: routeProblem(4) }), overrun);
    } finally {
      await service.close();
    }
  });

  // A started solve worker holds about 12 MiB of V8 heap; with 200 000 records split into strings
  // it needs about 24 MiB. 18 MiB leaves each side a margin (at 16 MiB a busy machine's late GC failed
  // the small problem too; at 24 MiB the big one sometimes fits).
  const HEAP_MB = 18;
  const heapHungryProblem = () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `r${i % 100}`);
    lines[5000] = 'needle';
    return { type: 'pattern_search', dataset: lines.join('\n'), target: { pattern: 'needle', min_confidence: 0.5 }, search_space_size: 262_144 };
  };

  it('replaces a worker that runs out of heap: 422 problem_too_large for that problem, the next one is solved', async () => {
    const service = new SolveService({ workers: 1, workerHeapMb: HEAP_MB });
    try {
      const big = heapHungryProblem();
      await assert.rejects(service.solve({ solver: 'grover', problem: big, seed: 1 }), (e: { status?: number; code?: string; param?: string; message?: string }) => {
        assert.equal(e.status, 422);
        assert.equal(e.code, 'problem_too_large');
        assert.equal(e.param, 'problem');
        assert.match(e.message!, /more memory than a solve worker may use \(18 MiB/);
        return true;
      });
      assert.deepEqual(service.load, { running: 0, queued: 0 });
      const next = (await service.solve({ solver: 'grover', problem: patternProblem(8, 3), seed: 1 })) as unknown as { solution: { target_index: number } };
      assert.equal(next.solution.target_index, 3);
    } finally {
      await service.close();
    }
  });

  it('a batch problem that runs out of heap fails alone; the others in the batch are solved', async () => {
    const service = new SolveService({ workers: 1, workerHeapMb: HEAP_MB });
    try {
      const big = heapHungryProblem();
      const result = await service.solveBatch({ solver: 'grover', problems: [patternProblem(8, 3), big, patternProblem(8, 6)], seed: 1 });
      assert.deepEqual(result.request_counts, { total: 3, completed: 2, failed: 1 });
      const [first, failed, last] = result.results;
      assert.ok(first?.status === 'completed' && last?.status === 'completed' && failed?.status === 'failed');
      assert.equal(first.solution['target_index'], 3);
      assert.equal(last.solution['target_index'], 6);
      assert.equal(failed.error.code, 'problem_too_large');
      assert.equal(failed.error.param, 'problems.1');
    } finally {
      await service.close();
    }
  });

  it('refuses new work after close', async () => {
    const service = new SolveService({ workers: 1 });
    await service.close();
    await assert.rejects(service.solve({ solver: 'grover', problem: patternProblem(4, 2) }), (e: { status?: number }) => e.status === 503);
  });
});

describe('429 when the solve queue is full', () => {
  it('refuses with Retry-After and recovers', async () => {
    const service = new SolveService({ workers: 1, maxQueue: 0 });
    const app = await build(service);
    try {
      const slow = post(app, '/api/solve', { solver: 'qaoa', problem: routeProblem(4) });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(4, 1) });
      assert.equal(refused.statusCode, 429, refused.body);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(refused.json().error.type, 'rate_limit_error');
      const batch = await post(app, '/api/solve/batch', { solver: 'grover', problems: [patternProblem(4, 1)] });
      assert.equal(batch.statusCode, 429);
      assert.equal((await slow).statusCode, 200);
      assert.equal((await post(app, '/api/solve', { solver: 'grover', problem: patternProblem(4, 1) })).statusCode, 200);
    } finally {
      await app.close();
      await service.close();
    }
  });
});
