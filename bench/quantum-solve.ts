/**
 * End-to-end solve latency: POST /api/solve over real HTTP (an in-process Fastify on port 0,
 * global fetch) for a typical instance of each solver, next to the same solve called directly
 * in this thread (solveProblem, no HTTP, no worker); /health latency while a 24-qubit solve runs;
 * then a batch of 10 problems through /api/solve/batch against the same 10 sent one after
 * another to /api/solve (and, for 16-qubit routes, to a service whose simulator uses one thread).
 * Medians over RUNS runs. Usage: npm run bench:solve [-- --runs 5]
 */
import { availableParallelism, cpus } from 'node:os';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { solveRoutes } from '../src/quantum/solve-routes.ts';
import { SolveService } from '../src/quantum/solve-service.ts';
import { solveProblem } from '../src/quantum/solvers/registry.ts';
import { installOpenAIErrorHandler } from '../src/http/openai-error-handler.ts';
import { lcg } from './seeded-lcg.ts';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;

const rand = lcg(7);
const gauss = (): number => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
const blob = (centers: number[][], per: number) => centers.flatMap((c, k) => Array.from({ length: per }, () => ({ label: `c${k}`, features: c.map((v) => v + 0.6 * gauss()) })));
const city = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i === 0 ? 'depot' : `s${i}`, lat: 48.85 + (rand() - 0.5) * 0.2, lng: 2.35 + (rand() - 0.5) * 0.3 }));

const instances: { name: string; solver: string; problem: Record<string, unknown> }[] = [
  { name: 'qaoa route, 1 vehicle, 4 stops (16 qubits)', solver: 'qaoa', problem: { type: 'route_optimization', nodes: city(5), constraints: { max_distance_km: 200, vehicle_count: 1 } } },
  { name: 'qaoa route, 3 vehicles, 9 stops (3 × 9 qubits)', solver: 'qaoa', problem: { type: 'route_optimization', nodes: city(10), constraints: { max_distance_km: 200, vehicle_count: 3 } } },
  {
    name: 'grover pattern_search, 4096 records (12 qubits)',
    solver: 'grover',
    problem: { type: 'pattern_search', dataset: Array.from({ length: 4096 }, (_, i) => (i === 2961 ? `id=${i} MATCH` : `id=${i} ok`)).join('\n'), target: { pattern: 'MATCH', min_confidence: 0.9 }, search_space_size: 4096 },
  },
  { name: 'grover qrng, 4096 bits', solver: 'grover', problem: { type: 'qrng', bits: 4096, format: 'base64' } },
  { name: 'qkmeans, 60 points × 2 features, k = 3', solver: 'qkmeans', problem: { type: 'clustering', data: blob([[0, 0], [5, 0], [2, 5]], 20).map((p, i) => ({ id: `p${i}`, features: p.features })), k: 3, max_iterations: 10 } },
  {
    name: 'qsvm, 30 train / 20 predict × 2 features',
    solver: 'qsvm',
    problem: { type: 'classification', training_data: blob([[0, 0], [4, 4]], 15), predict: blob([[0, 0], [4, 4]], 10).map((p) => ({ features: p.features })) },
  },
  {
    name: 'qubo portfolio, 20 assets (20 qubits, angles transferred)',
    solver: 'qubo',
    problem: { type: 'portfolio_allocation', assets: Array.from({ length: 20 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + rand() * 0.12, risk: 0.05 + rand() * 0.3 })), constraints: { max_assets: 6, max_risk: 0.15, min_return: 0.07 } },
  },
  {
    name: 'qubo portfolio, 12 assets (12 qubits)',
    solver: 'qubo',
    problem: { type: 'portfolio_allocation', assets: Array.from({ length: 12 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + rand() * 0.12, risk: 0.05 + rand() * 0.3 })), constraints: { max_assets: 4, max_risk: 0.15, min_return: 0.07 } },
  },
];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * How much parallel CPU this shared machine gives right now: the same fixed spin loop on two
 * worker threads, one after the other vs at once. ×2.0 means two free cores; the batch speed-up
 * below cannot exceed it.
 */
async function parallelHeadroom(): Promise<number> {
  const code = `const { parentPort } = require('node:worker_threads');
    parentPort.on('message', () => { let x = 0; for (let i = 0; i < 1e8; i++) x += Math.sqrt(i); parentPort.postMessage(x); });`;
  const workers = [new Worker(code, { eval: true }), new Worker(code, { eval: true })];
  const spin = (w: Worker) => new Promise((resolve) => { w.once('message', resolve); w.postMessage(0); });
  const ratios: number[] = [];
  for (let k = 0; k < 3; k++) {
    let t = performance.now();
    await spin(workers[0]!);
    await spin(workers[1]!);
    const sequential = performance.now() - t;
    t = performance.now();
    await Promise.all(workers.map(spin));
    ratios.push(sequential / (performance.now() - t));
  }
  await Promise.all(workers.map((w) => w.terminate()));
  return median(ratios);
}

async function startService(): Promise<{ service: SolveService; app: ReturnType<typeof Fastify>; base: string }> {
  const service = new SolveService();
  service.warm();
  const app = Fastify({ logger: false });
  installOpenAIErrorHandler(app);
  await app.register(solveRoutes, { prefix: '/api', service });
  app.get('/health', async () => ({ status: 'ok', quantum: service.load }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { service, app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}
const { service, app, base } = await startService();

async function post(path: string, body: unknown, at = base): Promise<{ ms: number; json: Record<string, unknown> }> {
  const t = performance.now();
  const res = await fetch(`${at}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return { ms: performance.now() - t, json };
}

// warm both workers up
await post('/api/solve/batch', { solver: 'grover', problems: [instances[2]!.problem, instances[2]!.problem], seed: 1 });

console.log(`# svc solve bench — ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}, ${service.workers} solve workers, median of ${RUNS}\n`);
console.log(`Parallel headroom before (2-thread spin speed-up): ×${(await parallelHeadroom()).toFixed(2)}\n`);
console.log('| instance | method | /api/solve median ms | direct (no HTTP, no worker) median ms | overhead ms |');
console.log('|---|---|---:|---:|---:|');
for (const inst of instances) {
  const http: number[] = [];
  const direct: number[] = [];
  let method = '';
  for (let r = 0; r < RUNS; r++) {
    const res = await post('/api/solve', { solver: inst.solver, problem: inst.problem, seed: r + 1 });
    http.push(res.ms);
    method = String((res.json['solution'] as Record<string, unknown>)['method']);
    const t = performance.now();
    solveProblem(inst.solver, inst.problem, { shots: 1024, seed: r + 1 });
    direct.push(performance.now() - t);
  }
  console.log(`| ${inst.name} | ${method} | ${median(http).toFixed(1)} | ${median(direct).toFixed(1)} | ${(median(http) - median(direct)).toFixed(1)} |`);
}

// /health while a 24-qubit solve runs (the event loop must stay free), against /health idle
{
  const healthMs = async (): Promise<number> => {
    const t = performance.now();
    await (await fetch(`${base}/health`)).json();
    return performance.now() - t;
  };
  const idle: number[] = [];
  for (let i = 0; i < 20; i++) idle.push(await healthMs());
  const assets = Array.from({ length: 24 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + rand() * 0.12, risk: 0.05 + rand() * 0.3 }));
  let done = false;
  const solve = post('/api/solve', { solver: 'qubo', problem: { type: 'portfolio_allocation', assets, constraints: { max_assets: 8, max_risk: 0.15, min_return: 0.07 } }, seed: 1 }).then((r) => {
    done = true;
    return r;
  });
  const during: number[] = [];
  while (!done) {
    during.push(await healthMs());
    await new Promise((r) => setTimeout(r, 10));
  }
  const solved = await solve;
  const solution = solved.json['solution'] as { method: string; optimality_gap: number; quantum: { amplification: number } };
  const max = (xs: number[]): number => Math.max(...xs);
  console.log(
    `\n/health during a 24-qubit qubo solve (${solution.method}, ${solved.ms.toFixed(0)} ms, gap ${solution.optimality_gap}, amplification ×${solution.quantum.amplification.toFixed(0)}): ` +
      `${during.length} checks, median ${median(during).toFixed(2)} ms, max ${max(during).toFixed(2)} ms; idle: median ${median(idle).toFixed(2)} ms, max ${max(idle).toFixed(2)} ms`,
  );
}

// batch of 10 vs the same 10 sent one after another to /api/solve (same problems, same seeds);
// one untimed batch first, so both workers have compiled this solver (steady state)
async function batchVsSequential(label: string, solver: string, problems: Record<string, unknown>[], oneThread?: string): Promise<void> {
  await post('/api/solve/batch', { solver, problems, seed: 100 });
  if (oneThread) for (const [i, problem] of problems.slice(0, 2).entries()) await post('/api/solve', { solver, problem, seed: 100 + i }, oneThread);
  const seq: number[] = [];
  const seq1: number[] = [];
  const par: number[] = [];
  for (let r = 0; r < Math.max(3, RUNS); r++) {
    let t = performance.now();
    for (const [i, problem] of problems.entries()) await post('/api/solve', { solver, problem, seed: 100 + i });
    seq.push(performance.now() - t);
    if (oneThread) {
      t = performance.now();
      for (const [i, problem] of problems.entries()) await post('/api/solve', { solver, problem, seed: 100 + i }, oneThread);
      seq1.push(performance.now() - t);
    }
    par.push((await post('/api/solve/batch', { solver, problems, seed: 100 })).ms);
  }
  const ms = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
  const one = oneThread ? `${median(seq1).toFixed(0)} (×${(median(seq1) / median(par)).toFixed(2)})` : '—';
  console.log(`| ${label} | ${median(seq).toFixed(0)} | ${one} | ${median(par).toFixed(0)} | ×${(median(seq) / median(par)).toFixed(2)} | ${ms(seq)} / ${oneThread ? `${ms(seq1)} / ` : ''}${ms(par)} |`);
}
// The same service with SVC_SIM_THREADS=1 in its workers: every solve on one simulator thread,
// the baseline a batch's problems run against (one thread each)
process.env['SVC_SIM_THREADS'] = '1';
const single = await startService();
delete process.env['SVC_SIM_THREADS'];

console.log('\n| batch of 10 | sequential /api/solve ms (median) | sequential, one simulator thread ms (batch speed-up) | /api/solve/batch ms (median) | throughput vs sequential | runs (sequential / [one thread /] batch) |');
console.log('|---|---:|---:|---:|---:|---|');
await batchVsSequential(
  'qubo portfolios, 12 assets (12 qubits, one simulator thread each)',
  'qubo',
  Array.from({ length: 10 }, () => ({ type: 'portfolio_allocation', assets: Array.from({ length: 12 }, (_, i) => ({ id: `A${i}`, expected_return: 0.03 + rand() * 0.12, risk: 0.05 + rand() * 0.3 })), constraints: { max_assets: 4, max_risk: 0.15, min_return: 0.07 } })),
);
await batchVsSequential(
  'qaoa routes, 4 stops (16 qubits; a lone solve lets the simulator use both cores)',
  'qaoa',
  Array.from({ length: 10 }, () => ({ type: 'route_optimization', nodes: city(5), constraints: { max_distance_km: 200, vehicle_count: 1 } })),
  single.base,
);

console.log(`\nParallel headroom after (2-thread spin speed-up): ×${(await parallelHeadroom()).toFixed(2)}`);
await Promise.all([app.close(), single.app.close()]);
await Promise.all([service.close(), single.service.close()]);
