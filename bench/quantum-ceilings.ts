/**
 * The solvers at their qubit ceilings (and just past them): one solve per case, each in a fresh
 * child process (so its peak RSS is its own), called directly (solveProblem, no HTTP, no worker),
 * with the time and the peak resident memory. What docs/solvers.md ("Qubit ceilings and what
 * they cost") reports. Past a ceiling a solver answers classically, so those rows of the doc were
 * measured with the constant raised by hand; this script runs what ships.
 * Usage: npm run bench:ceilings [-- --only grover]   (a few minutes on 2 cores)
 */
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { solveProblem } from '../src/quantum/solvers/registry.ts';
import { GROVER_MAX_QUBITS } from '../src/quantum/solvers/grover-search.ts';
import { QSVM_MAX_QUBITS } from '../src/quantum/solvers/qsvm-classification.ts';
import { portfolioQaoaCeiling } from '../src/quantum/solvers/qubo-portfolio.ts';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 0.5) / 4294967296;
  };
}

/** Two gaussian classes nine spreads apart in n features. */
function classes(n: number, perClass: number, seed: number): { label: string; features: number[] }[] {
  const rand = lcg(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
  const step = 9 / Math.sqrt(n);
  return ['a', 'b'].flatMap((label, k) => Array.from({ length: perClass }, () => ({ label, features: Array.from({ length: n }, () => k * step + gauss()) })));
}

const grover = (qubits: number) => ({
  solver: 'grover',
  problem: { type: 'pattern_search', dataset: 'order-1 ok\norder-2 FRAUD\norder-3 ok', target: { pattern: 'FRAUD', min_confidence: 0.5 }, search_space_size: 2 ** qubits },
});
const qsvm = (n: number, train: number, predict: number) => ({
  solver: 'qsvm',
  problem: { type: 'classification', training_data: classes(n, train / 2, 1), predict: classes(n, predict / 2, 2).map((p) => ({ features: p.features })) },
});
const qubo = (n: number) => {
  const rand = lcg(n);
  const assets = Array.from({ length: n }, (_, i) => ({ id: `A${i}`, expected_return: 0.02 + 0.15 * rand(), risk: 0.05 + 0.3 * rand() }));
  return { solver: 'qubo', problem: { type: 'portfolio_allocation', assets, constraints: { max_assets: Math.ceil(n / 3), max_risk: 0.2, min_return: 0.06 } } };
};

const CASES: Record<string, { solver: string; problem: Record<string, unknown> }> = {
  [`grover ${GROVER_MAX_QUBITS - 2} qubits`]: grover(GROVER_MAX_QUBITS - 2),
  [`grover ${GROVER_MAX_QUBITS} qubits (ceiling)`]: grover(GROVER_MAX_QUBITS),
  [`qsvm 16 features, 40 train + 20 predict`]: qsvm(16, 40, 20),
  [`qsvm ${QSVM_MAX_QUBITS} features, 8 train + 4 predict (ceiling)`]: qsvm(QSVM_MAX_QUBITS, 8, 4),
  [`qsvm ${QSVM_MAX_QUBITS} features, 20 train + 10 predict (ceiling)`]: qsvm(QSVM_MAX_QUBITS, 20, 10),
  [`qubo ${portfolioQaoaCeiling()} assets (ceiling)`]: qubo(portfolioQaoaCeiling()),
};

const child = process.env['SVC_BENCH_CASE'];
if (child !== undefined) {
  const c = CASES[child]!;
  const started = performance.now();
  const { solution } = solveProblem(c.solver, c.problem, { shots: 1024, seed: 1 });
  const ms = performance.now() - started;
  const cv = solution['cross_validation'] as { candidates: unknown[] } | undefined;
  const detail = [solution['method'], solution['qubits'] ?? (solution['circuit'] as { qubits?: number } | undefined)?.qubits, cv ? `${cv.candidates.length} scale(s)` : undefined].filter((x) => x !== undefined).join(', ');
  process.send!({ ms, rssMiB: process.resourceUsage().maxRSS / 1024, detail });
} else {
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
  console.log(`${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log('| case | what ran | time | peak RSS |\n|---|---|---|---|');
  for (const name of Object.keys(CASES)) {
    if (only !== undefined && !name.startsWith(only)) continue;
    const result = await new Promise<{ ms: number; rssMiB: number; detail: string }>((resolve, reject) => {
      const proc = fork(new URL(import.meta.url), [], { env: { ...process.env, SVC_BENCH_CASE: name } });
      proc.once('message', (m) => resolve(m as { ms: number; rssMiB: number; detail: string }));
      proc.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`${name}: exit ${code}`))));
    });
    console.log(`| ${name} | ${result.detail} | ${(result.ms / 1000).toFixed(1)} s | ${Math.round(result.rssMiB)} MiB |`);
  }
}
