/**
 * The solve endpoints as mounted by the real daemon: same envelope and loopback rules as the
 * OpenAI routes, and the event loop stays free while the workers solve.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
before(async () => { daemon = await startDaemon({ withModel: false }); });
after(async () => { assert.equal(await daemon.stop(), 0); });

const post = (path: string, body: unknown) =>
  fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function needleSearch(records: number, at: number) {
  const lines = Array.from({ length: records }, (_, i) => (i % 1000).toString(36));
  lines[at] = 'needle';
  return { type: 'pattern_search', dataset: lines.join('\n'), target: { pattern: 'needle', min_confidence: 0.5 }, search_space_size: records };
}

test('a Grover search through the daemon finds the record, and health reports the solvers', async () => {
  const res = await post('/api/solve', { solver: 'grover', problem: needleSearch(1000, 617), seed: 1 });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { id: string; status: string; solution: { target_index: number; method: string }; meta: { shots: number } };
  assert.match(body.id, /^qj_/);
  assert.equal(body.status, 'completed');
  assert.equal(body.solution.method, 'grover');
  assert.equal(body.solution.target_index, 617);
  assert.equal(body.meta.shots, 1024);
  const health = (await (await fetch(`${daemon.url}/health`)).json()) as { quantum: { solvers: string[]; substrate: string; max_qubits: number } };
  assert.deepEqual(health.quantum.solvers, ['qaoa', 'grover', 'qkmeans', 'qsvm', 'qubo']);
  assert.equal(health.quantum.substrate, 'simulated');
  assert.ok(health.quantum.max_qubits >= 20);
});

test('/health answers while a batch of large solves occupies every worker', async () => {
  const problems = Array.from({ length: 10 }, (_, i) => needleSearch(150_000, 1000 + i));
  const batch = post('/api/solve/batch', { solver: 'grover', problems, seed: 5 }).then(async (r) => ({ status: r.status, body: (await r.json()) as { results: { index: number; solution: { target_index: number } }[] } }));
  let batchDone = false;
  void batch.then(() => { batchDone = true; });
  // Poll until the daemon has parsed the batch (on its intake worker) and handed it to the solve workers.
  let running = 0;
  while (running === 0 && !batchDone) {
    const health = await fetch(`${daemon.url}/health`);
    assert.equal(health.status, 200);
    running = ((await health.json()) as { quantum: { running: number } }).quantum.running;
  }
  assert.equal(batchDone, false, 'health answered while the batch was still solving');
  assert.ok(running > 0);
  const { status, body } = await batch;
  assert.equal(status, 200);
  assert.deepEqual(body.results.map((r) => r.index), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(body.results.map((r) => r.solution.target_index), problems.map((_, i) => 1000 + i));
});

test('/health answers while a 24-qubit solve runs', async () => {
  // 24 assets: QAOA on a 2^24-amplitude state (256 MiB), seconds of simulator work in a worker
  const assets = Array.from({ length: 24 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + ((i * 7) % 11) / 80, risk: 0.05 + ((i * 5) % 13) / 40 }));
  const problem = { type: 'portfolio_allocation', assets, constraints: { max_assets: 6, max_risk: 0.15, min_return: 0.09 } };
  let solveDone = false;
  const solve = post('/api/solve', { solver: 'qubo', problem, seed: 2 }).then(async (r) => {
    solveDone = true;
    return { status: r.status, body: (await r.json()) as { solution: { method: string; circuit: { qubits: number }; optimality_gap: number; qaoa: { angles: string } } } };
  });
  // poll until the daemon reports the solve running, then check health answered before it ended
  let running = 0;
  let answers = 0;
  while (running === 0 && !solveDone) {
    const health = await fetch(`${daemon.url}/health`);
    assert.equal(health.status, 200);
    running = ((await health.json()) as { quantum: { running: number } }).quantum.running;
    answers++;
    if (running === 0) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(running, 1, 'health saw the 24-qubit solve running');
  assert.equal(solveDone, false, 'health answered while the solve was still running');
  const health = (await (await fetch(`${daemon.url}/health`)).json()) as { quantum: { solver_max_qubits: Record<string, number> } };
  assert.equal(health.quantum.solver_max_qubits['qubo'], 24);
  assert.equal(solveDone, false, 'a second health check also answered during the solve');
  const { status, body } = await solve;
  assert.equal(status, 200);
  assert.equal(body.solution.method, 'qaoa');
  assert.equal(body.solution.circuit.qubits, 24);
  assert.match(body.solution.qaoa.angles, /^transferred/);
  assert.equal(typeof body.solution.optimality_gap, 'number');
  assert.ok(answers >= 1);
});

test('solve errors come in the OpenAI envelope with the contract statuses', async () => {
  const unknown = await post('/api/solve', { solver: 'annealer', problem: { type: 'x' } });
  assert.equal(unknown.status, 400);
  assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, 'unknown_solver');
  const shots = await post('/api/solve', { solver: 'grover', problem: needleSearch(8, 1), shots: 10_000_000 });
  assert.equal(shots.status, 400);
  assert.equal(((await shots.json()) as { error: { param: string } }).error.param, 'shots');
  const eagle = await post('/api/solve', { solver: 'grover', problem: needleSearch(8, 1), substrate: 'vendor-eagle' });
  assert.equal(eagle.status, 503);
});
