import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError } from '../../../src/shared/api-error.ts';
import { createHardwareSubstrate, resolveHardwareConfig, type HardwareConfig } from '../../../src/quantum/hardware/hardware-config.ts';
import { SolveService } from '../../../src/quantum/solve-service.ts';
import type { BatchResponse, SolveResponse } from '../../../src/quantum/solve-schemas.ts';
import { startMockQuantumProvider, type MockProvider, type MockProviderOptions, type MockResultsBody } from '../../helpers/mock-quantum-provider.ts';
import { patternProblem, portfolioProblem, routeProblem } from '../fixtures.ts';

const TOKEN = 'tok-3f9a7c21-not-a-real-token';

function config(url: string, extra: Partial<HardwareConfig> = {}): HardwareConfig {
  return { ...resolveHardwareConfig({ quantumProvider: url, quantumBackend: 'ibm_brisbane', quantumTimeout: '20s', quantumPoll: '20ms' })!, ...extra };
}

function service(cfg: HardwareConfig | undefined, token: string | null = TOKEN): SolveService {
  return new SolveService({ workers: 1, hardware: createHardwareSubstrate(cfg, token === null ? {} : { SVC_QUANTUM_TOKEN: token }) });
}

async function rejects(promise: Promise<unknown>, status: number, code: string): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.status, status, error.message);
    assert.equal(error.code, code, error.message);
    assert.ok(!error.message.includes(TOKEN));
    return error;
  }
  assert.fail('expected a refusal');
}

describe('vendor-eagle through a provider job API (a local server that runs the QASM on the simulator)', () => {
  let provider: MockProvider;
  let svc: SolveService;
  before(async () => {
    provider = await startMockQuantumProvider({ token: TOKEN, pollsBeforeDone: 2 });
    svc = service(config(provider.url));
  });
  after(async () => {
    await svc.close();
    await provider.close();
  });

  it('grover: the needle comes back from the provider\'s samples, with job id, backend, shots and layout', async () => {
    const res = (await svc.solve({ solver: 'grover', problem: patternProblem(16, 11), substrate: 'vendor-eagle', shots: 512, seed: 3 })) as SolveResponse;
    assert.equal(res.substrate, 'vendor-eagle');
    assert.equal(res.status, 'completed');
    assert.equal(res.solution.found, true);
    assert.equal(res.solution.target_index, 11);
    assert.ok((res.solution.confidence as number) > 0.8);
    const job = provider.jobs.at(-1)!;
    assert.equal(job.shots, 512);
    assert.match(job.qasm, /^OPENQASM 3\.0;/);
    assert.doesNotMatch(job.qasm, /\b(h|cx|cz|mcx|ctrl)\b (?!_)/, 'only basis gates outside the ecr definition');
    const hardware = res.solution.hardware as { jobs: Record<string, unknown>[] };
    assert.equal(hardware.jobs.length, 1);
    const report = hardware.jobs[0]!;
    assert.equal(report.provider_job_id, job.id);
    assert.equal(report.backend, 'ibm_brisbane');
    assert.equal(report.target, 'eagle_r3');
    assert.equal(report.shots, 512);
    assert.equal((report.final_layout as number[]).length, 4);
    assert.ok((report.gates as Record<string, number>).ecr! > 0);
    assert.equal(res.meta.shots, 512);
    // The token went only where it belongs.
    assert.ok(provider.authorizations.every((a) => a === `Bearer ${TOKEN}`));
    assert.equal(svc.capability().substrates['vendor-eagle'], 'configured');
  });

  it('qaoa route: the provider\'s counts decode into the same route shape, and the route is the optimum', async () => {
    const local = (await svc.solve({ solver: 'qaoa', problem: routeProblem(3), seed: 5 })) as SolveResponse;
    const res = (await svc.solve({ solver: 'qaoa', problem: routeProblem(3), substrate: 'vendor-eagle', seed: 5 })) as SolveResponse;
    assert.equal(res.substrate, 'vendor-eagle');
    assert.deepEqual(Object.keys(res.solution).filter((k) => k !== 'hardware').sort(), Object.keys(local.solution).sort());
    assert.equal(res.solution.method, 'qaoa');
    assert.deepEqual(res.solution.route, local.solution.route);
    assert.equal(typeof res.solution.classical_optimum, 'number');
    assert.equal(res.solution.cost, res.solution.classical_optimum);
    const hardware = res.solution.hardware as { jobs: { logical_qubits: number; provider_job_id: string }[] };
    assert.equal(hardware.jobs.length, 1);
    assert.equal(hardware.jobs[0]!.logical_qubits, 9);
    assert.equal(hardware.jobs[0]!.provider_job_id, provider.jobs.at(-1)!.id);
  });

  it('qubo portfolio: the selection from the provider\'s shots is the local one (the exact optimum of this instance)', async () => {
    const local = (await svc.solve({ solver: 'qubo', problem: portfolioProblem(), seed: 1 })) as SolveResponse;
    const res = (await svc.solve({ solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle', seed: 1 })) as SolveResponse;
    assert.deepEqual(res.solution.selected, local.solution.selected);
    assert.deepEqual(res.solution.selected, (local.solution.classical_optimum as { selected: string[] }).selected);
    const [job] = (res.solution.hardware as { jobs: { logical_qubits: number; gates: Record<string, number> }[] }).jobs;
    assert.equal(job!.logical_qubits, 6);
    assert.ok(job!.gates.ecr! > 0);
  });

  it('a batch is queued: one job at a time, in request order, each after the previous finished', async () => {
    const before = provider.jobs.length;
    const res = (await svc.solveBatch({ solver: 'grover', problems: [patternProblem(16, 2), patternProblem(16, 9)], substrate: 'vendor-eagle', seed: 1 })) as BatchResponse;
    assert.equal(res.status, 'completed');
    assert.deepEqual(res.results.map((r) => r.solution!.target_index), [2, 9]);
    const [first, second] = provider.jobs.slice(before);
    assert.ok(first!.finished !== undefined && second!.created >= first!.finished);
    assert.deepEqual(res.results.map((r) => (r.solution!.hardware as { jobs: { provider_job_id: string }[] }).jobs[0]!.provider_job_id), [first!.id, second!.id]);
  });

  it('solvers that estimate from many circuits are refused with 422 on hardware', async () => {
    await rejects(svc.solve({ solver: 'grover', problem: { type: 'qrng', bits: 8 }, substrate: 'vendor-eagle' }), 422, 'substrate_unsupported');
  });
});

describe('vendor-eagle when things go wrong: clean 502, 503 and 504', () => {
  it('no provider configured: 503 saying so; a provider without its token: 503 naming the variable', async () => {
    const none = service(undefined);
    const error = await rejects(none.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 503, 'substrate_unavailable');
    assert.match(error.message, /--quantum-provider/);
    assert.equal(none.capability().substrates['vendor-eagle'], 'not_configured');
    await none.close();
    const noToken = service(config('http://127.0.0.1:9/api/v1'), null);
    assert.match((await rejects(noToken.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 503, 'substrate_unavailable')).message, /SVC_QUANTUM_TOKEN/);
    await noToken.close();
  });

  it('a failed job: 502 with the provider\'s reason', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'fail' });
    const svc = service(config(provider.url));
    const error = await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 502, 'substrate_job_failed');
    assert.match(error.message, /job-1 ended Failed: .*qubit 3 is not operational/);
    await svc.close();
    await provider.close();
  });

  it('a job that never finishes: 504 after the configured timeout, and the job is cancelled', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const svc = service(config(provider.url, { timeoutMs: 400 }));
    const error = await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 504, 'substrate_timeout');
    assert.match(error.message, /job-1 did not finish within 400 ms \(--quantum-timeout\); last status: Queued; svc asked the provider to cancel it/);
    assert.deepEqual(provider.cancelled, ['job-1']);
    await svc.close();
    await provider.close();
  });

  it('a token the provider refuses: 502 substrate_auth_failed, the token not echoed', async () => {
    const provider = await startMockQuantumProvider({ token: 'the-right-one' });
    const svc = service(config(provider.url));
    const error = await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 502, 'substrate_auth_failed');
    assert.match(error.message, /HTTP 401.*SVC_QUANTUM_TOKEN/);
    await svc.close();
    await provider.close();
  });

  it('a provider that is not there: 502 substrate_unreachable', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN });
    const url = provider.url;
    await provider.close();
    const svc = service(config(url));
    assert.match((await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle' }), 502, 'substrate_unreachable')).message, /could not be reached \(ECONNREFUSED\)/);
    await svc.close();
  });

  it('a batch item whose job fails is a failed item with the provider\'s reason; the others complete', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, failJobs: ['job-2'] });
    const svc = service(config(provider.url));
    const res = (await svc.solveBatch({ solver: 'grover', problems: [patternProblem(16, 1), patternProblem(16, 4), patternProblem(16, 8)], substrate: 'vendor-eagle', seed: 1 })) as BatchResponse;
    assert.deepEqual(res.results.map((r) => r.status), ['completed', 'failed', 'completed']);
    assert.deepEqual([res.results[0]!.solution!.target_index, res.results[2]!.solution!.target_index], [1, 8]);
    const failed = res.results[1] as unknown as { error: { code: string; message: string } };
    assert.equal(failed.error.code, 'substrate_job_failed');
    assert.match(failed.error.message, /job-2 ended Failed/);
    await svc.close();
    await provider.close();
  });

  it('results as counts (not per-shot samples) decode the same way', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'counts' });
    const svc = service(config(provider.url));
    const res = (await svc.solve({ solver: 'grover', problem: patternProblem(16, 6), substrate: 'vendor-eagle', seed: 2 })) as SolveResponse;
    assert.equal(res.solution.target_index, 6);
    await svc.close();
    await provider.close();
  });

  it('flags: a backend without a provider, a provider without a backend, a URL with credentials are refused', () => {
    assert.throws(() => resolveHardwareConfig({ quantumBackend: 'ibm_brisbane' }), /needs --quantum-provider/);
    assert.throws(() => resolveHardwareConfig({ quantumProvider: 'https://q.example/api/v1' }), /needs --quantum-backend/);
    assert.throws(() => resolveHardwareConfig({ quantumProvider: 'https://u:p@q.example/api/v1', quantumBackend: 'b' }), /no credentials/);
    assert.equal(resolveHardwareConfig({}), undefined);
  });
});

describe('vendor-eagle review fixes: sizes refused up front, shutdown, the token, counts that decide the answer', () => {
  it('a Grover search space over 128 indices or a portfolio over 10 assets is 422 before any simulation or provider job', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN });
    const svc = service(config(provider.url));
    const error = await rejects(svc.solve({ solver: 'grover', problem: patternProblem(256, 3), substrate: 'vendor-eagle' }), 422, 'circuit_not_transpilable');
    assert.match(error.message, /256 indices/);
    const assets = Array.from({ length: 11 }, (_, i) => ({ id: `A${i}`, expected_return: 0.05 + 0.01 * i, risk: 0.1 + 0.02 * i }));
    await rejects(svc.solve({ solver: 'qubo', problem: { type: 'portfolio_allocation', assets, constraints: { max_assets: 3, max_risk: 0.3, min_return: 0.05 } }, substrate: 'vendor-eagle' }), 422, 'circuit_not_transpilable');
    assert.equal(provider.jobs.length, 0);
    await svc.close();
    await provider.close();
  });

  it('close() while a job runs: 503 shutting_down, the provider job is cancelled; run() after close() rejects at once', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const hardware = createHardwareSubstrate(config(provider.url, { timeoutMs: 60_000 }), { SVC_QUANTUM_TOKEN: TOKEN });
    const running = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 3) as never }, 64, 1);
    const queued = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 4) as never }, 64, 1);
    const answers = [rejects(running, 503, 'shutting_down'), rejects(queued, 503, 'shutting_down')];
    while ((provider.jobs[0]?.polls ?? 0) === 0) await new Promise((r) => setTimeout(r, 10));
    await hardware.close();
    await Promise.all(answers);
    assert.deepEqual(provider.cancelled, ['job-1']);
    await rejects(hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 5) as never }, 64, 1), 503, 'shutting_down');
    assert.equal(provider.jobs.length, 1);
    await provider.close();
  });

  it('a request signal that aborts skips the queued item and cancels the running provider job', async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const hardware = createHardwareSubstrate(config(provider.url, { timeoutMs: 60_000 }), { SVC_QUANTUM_TOKEN: TOKEN });
    const first = new AbortController();
    const second = new AbortController();
    const running = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 3) as never }, 64, 1, first.signal);
    const queued = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 4) as never }, 64, 1, second.signal);
    while ((provider.jobs[0]?.polls ?? 0) === 0) await new Promise((r) => setTimeout(r, 10));
    second.abort();
    await rejects(queued, 503, 'request_closed');
    first.abort();
    await rejects(running, 503, 'request_closed');
    // close() waits for the abandoned provider call, which cancels its job before it settles.
    await hardware.close();
    assert.deepEqual(provider.cancelled, ['job-1']);
    assert.equal(provider.jobs.length, 1, 'the skipped item never reached the provider');
    await provider.close();
  });

  it('SVC_QUANTUM_TOKEN is taken out of the environment once read (worker threads copy it)', () => {
    const env: NodeJS.ProcessEnv = { SVC_QUANTUM_TOKEN: TOKEN, OTHER: 'kept' };
    const hardware = createHardwareSubstrate(config('http://127.0.0.1:9/api/v1'), env);
    assert.equal(hardware.status, 'configured');
    assert.deepEqual(env, { OTHER: 'kept' });
  });

  it('a hardware worker past its heap limit is 422 problem_too_large, not a 500', async () => {
    const { ProviderHardware } = await import('../../../src/quantum/hardware/hardware-substrate.ts');
    const { RuntimeSamplerClient } = await import('../../../src/quantum/hardware/runtime-sampler-client.ts');
    const client = new RuntimeSamplerClient({ baseUrl: 'http://127.0.0.1:9/api/v1', backend: 'b', token: undefined, tokenEnv: 'SVC_QUANTUM_TOKEN', timeoutMs: 1000 });
    // As in solve-routes.test.ts: 200 000 records need about 24 MiB of heap, 18 MiB is too little.
    // run() is called directly: admit() would refuse this search space before any worker starts.
    const hardware = new ProviderHardware({ client, workerHeapMb: 18 });
    const lines = Array.from({ length: 200_000 }, (_, i) => `r${i % 100}`);
    lines[5000] = 'needle';
    const problem = { type: 'pattern_search', dataset: lines.join('\n'), target: { pattern: 'needle', min_confidence: 0.5 }, search_space_size: 262_144 };
    const error = await rejects(hardware.run({ solver: 'grover', type: 'pattern_search', problem: problem as never }, 64, 1), 422, 'problem_too_large');
    assert.match(error.message, /18 MiB/);
    await hardware.close();
  });

  it('the answer comes from the provider\'s counts: wrong counts change it (grover target, portfolio optimal_count)', async () => {
    const honest = await startMockQuantumProvider({ token: TOKEN });
    // Bit 0 flipped on every shot: the needle at 11 (0b1011) is measured as 10.
    const flipped = await startMockQuantumProvider({ token: TOKEN, mapValue: (v) => v ^ 1 });
    // Every shot measures 000000: no asset selected, so no feasible selection was measured.
    const empty = await startMockQuantumProvider({ token: TOKEN, mapValue: () => 0 });
    const [a, b, c] = [service(config(honest.url)), service(config(flipped.url)), service(config(empty.url))];
    after(async () => {
      for (const s of [a, b, c]) await s.close();
      for (const p of [honest, flipped, empty]) await p.close();
    });
    const pattern = { solver: 'grover', problem: patternProblem(16, 11), substrate: 'vendor-eagle', shots: 256, seed: 3 };
    const good = (await a.solve(pattern)) as SolveResponse;
    const bad = (await b.solve(pattern)) as SolveResponse;
    assert.equal(good.solution.target_index, 11);
    // 10 is not a match: the flipped shots point at a record that fails the oracle's check.
    assert.equal(bad.solution.found, false);
    assert.equal(bad.solution.target_index, -1);
    const portfolio = { solver: 'qubo', problem: portfolioProblem(), substrate: 'vendor-eagle', seed: 1 };
    const fine = (await a.solve(portfolio)) as SolveResponse;
    const none = (await c.solve(portfolio)) as SolveResponse;
    assert.ok((fine.meta as { optimal_count: number }).optimal_count > 0);
    assert.equal((none.meta as { optimal_count: number }).optimal_count, 0);
  });
});

describe('vendor-eagle: one deadline per hardware solve and batch item (--quantum-deadline)', () => {
  // The deadline counts from entering the lane, so it also covers starting a worker and the
  // local solve; on a loaded machine that alone can take seconds. Tests that need the provider
  // job to exist before the deadline use one sized from an honest solve here (6× it, at least
  // 3 s, whole seconds: `npm test` runs two files at once, and 3× was once too tight there), so
  // they test the deadline and not the machine's speed. Each test closes its servers in t.after,
  // so a failed assertion fails the test instead of leaving the file's process running.
  let deadline = 2000;
  const seconds = (): string => `${deadline / 1000} s`;
  before(async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN });
    const svc = service(config(provider.url));
    const started = Date.now();
    await svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle', shots: 64 });
    deadline = Math.max(3000, Math.ceil((6 * (Date.now() - started)) / 1000) * 1000);
    await svc.close();
    await provider.close();
  });

  it('a provider that never finishes: 504 substrate_timeout at the solve\'s deadline, not the job\'s longer timeout, and the job is cancelled', { timeout: 120_000 }, async (t) => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    // --quantum-timeout (one job) is 120 s: only the deadline can end this solve before the test's timeout.
    const svc = service(config(provider.url, { timeoutMs: 120_000, deadlineMs: deadline }));
    t.after(() => Promise.allSettled([svc.close(), provider.close()]));
    const started = Date.now();
    const error = await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle', shots: 64 }), 504, 'substrate_timeout');
    const took = Date.now() - started;
    assert.match(error.message, new RegExp(`within its deadline of ${seconds()} \\(--quantum-deadline\\): provider job job-1 had not finished \\(last status: Queued\\); svc asked the provider to cancel it`));
    assert.ok(took < 120_000, `answered after ${took} ms: the job's timeout acted, not the deadline`);
    while (provider.cancelled.length === 0 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(provider.cancelled, ['job-1']);
    await svc.close();
    await provider.close();
  });

  it('a problem stuck behind another in the lane gets 504 at its own deadline, never reaches the provider, and the one ahead runs on', { timeout: 120_000 }, async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const hardware = createHardwareSubstrate(config(provider.url, { timeoutMs: 60_000, deadlineMs: 60_000 }), { SVC_QUANTUM_TOKEN: TOKEN });
    const ahead = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 3) as never }, 64, 1);
    const aheadAnswer = rejects(ahead, 503, 'shutting_down');
    while ((provider.jobs[0]?.polls ?? 0) === 0) await new Promise((r) => setTimeout(r, 10));
    const stuck = hardware.run({ solver: 'grover', type: 'pattern_search', problem: patternProblem(16, 4) as never }, 64, 1, undefined, 300);
    const error = await rejects(stuck, 504, 'substrate_timeout');
    assert.match(error.message, /deadline of 300 ms \(--quantum-deadline\): it was still waiting for the hardware lane \(one provider job at a time\) behind 1 problem\b/);
    assert.equal(provider.jobs.length, 1, 'the stuck problem never reached the provider');
    assert.deepEqual(provider.cancelled, [], 'the problem ahead was not touched');
    await hardware.close();
    await aheadAnswer;
    assert.deepEqual(provider.cancelled, ['job-1']);
    await provider.close();
  });

  it('a batch: each item has its own deadline; the running one\'s job is cancelled, the queued one never submitted', { timeout: 120_000 }, async (t) => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const svc = service(config(provider.url, { timeoutMs: 120_000, deadlineMs: deadline }));
    t.after(() => Promise.allSettled([svc.close(), provider.close()]));
    const res = (await svc.solveBatch({ solver: 'grover', problems: [patternProblem(16, 1), patternProblem(16, 4)], substrate: 'vendor-eagle', shots: 64, seed: 1 })) as BatchResponse;
    assert.deepEqual(res.results.map((r) => r.status), ['failed', 'failed']);
    const [first, second] = res.results.map((r) => (r as unknown as { error: { code: string; message: string } }).error);
    assert.equal(first!.code, 'substrate_timeout');
    assert.match(first!.message, /provider job job-1 had not finished/);
    assert.equal(second!.code, 'substrate_timeout');
    // Queued behind the first, it times out waiting for the lane, or, on a busy machine, before its
    // own local part (angles, transpiling) is even done; either way it never reaches the provider
    // (below). The lane message itself is pinned by the test before this one.
    assert.match(second!.message, /still waiting for the hardware lane|the local part of the solve \(angles optimised on the simulator, the circuit transpiled\) had not finished/);
    while (provider.cancelled.length === 0 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(provider.cancelled, ['job-1']);
    assert.equal(provider.jobs.length, 1);
    await svc.close();
    await provider.close();
  });

  it('a deadline that passes before the circuit is ready stops the local solve: 504, no provider job', { timeout: 120_000 }, async () => {
    const provider = await startMockQuantumProvider({ token: TOKEN });
    const hardware = createHardwareSubstrate(config(provider.url), { SVC_QUANTUM_TOKEN: TOKEN });
    // 5 ms is less than a hardware worker takes to start, let alone optimise QAOA angles.
    const error = await rejects(hardware.run({ solver: 'qaoa', type: 'route_optimization', problem: routeProblem(3) as never }, 64, 1, undefined, 5), 504, 'substrate_timeout');
    assert.match(error.message, /deadline of 5 ms \(--quantum-deadline\): the local part of the solve .* had not finished/);
    await hardware.close();
    assert.equal(provider.jobs.length, 0);
    await provider.close();
  });

  it('after a deadline the lane is free: the next solve completes', { timeout: 120_000 }, async (t) => {
    const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
    const svc = service(config(provider.url, { deadlineMs: deadline }));
    t.after(() => Promise.allSettled([svc.close(), provider.close()]));
    await rejects(svc.solve({ solver: 'grover', problem: patternProblem(16, 3), substrate: 'vendor-eagle', shots: 64 }), 504, 'substrate_timeout');
    provider.options.behaviour = 'complete';
    const res = (await svc.solve({ solver: 'grover', problem: patternProblem(16, 5), substrate: 'vendor-eagle', shots: 64, seed: 2 })) as SolveResponse;
    assert.equal(res.solution.target_index, 5);
    assert.equal((res.solution.hardware as { jobs: { provider_job_id: string }[] }).jobs[0]!.provider_job_id, 'job-2');
    await svc.close();
    await provider.close();
  });
});

describe('vendor-eagle: results the provider should not have sent are 502, never an answer', () => {
  const bits = (job: { qasm: string }): number => Number(/bit\[(\d+)\] c;/.exec(job.qasm)![1]);
  const withRegister = (honest: MockResultsBody, register: Record<string, unknown>): MockResultsBody => ({ ...honest, results: [{ ...honest.results[0]!, data: { c: register as never } }] });
  const cases: [string, NonNullable<MockProviderOptions['resultsBody']>, RegExp][] = [
    ['bitstrings one bit too wide', (h, job) => withRegister(h, { counts: { [`1${'0'.repeat(bits(job))}`]: job.shots } }), /bitstring "10+" of \d+ bits where the circuit measures \d+/],
    ['hex samples past the register', (h, job) => withRegister(h, { samples: Array<string>(job.shots).fill(`0x${(2 ** bits(job)).toString(16)}`) }), /wider than the \d+-bit register/],
    ['a non-binary key', (h) => withRegister(h, { counts: { '0x1': 1, '10201': 1 } }), /outcome "10201" that is neither 0x-hex nor a bitstring/],
    ['a negative count', (h) => withRegister(h, { counts: { '0x1': -5 } }), /count of -5 for "0x1"/],
    ['a non-integer count', (h) => withRegister(h, { counts: { '0x1': 1.5 } }), /count of 1\.5 for "0x1"/],
    ['zero shots in total', (h) => withRegister(h, { counts: {} }), /no shots at all/],
    ['more shots than requested', (h, job) => withRegister(h, { counts: { '0x0': job.shots + 1 } }), /more shots than the \d+ requested/],
    ['no results field', () => ({ metadata: { version: 2 } }), /no results array/],
    ['a body that is not JSON', () => '<html><body>502 Bad Gateway</body></html>', /an answer to GET \/jobs\/job-\d+\/results that is not JSON/],
  ];
  let provider: MockProvider;
  let svc: SolveService;
  before(async () => {
    provider = await startMockQuantumProvider({ token: TOKEN });
    svc = service(config(provider.url));
  });
  after(async () => {
    await svc.close();
    await provider.close();
  });
  const requests: [string, Record<string, unknown>][] = [
    ['qaoa route (its quantum_result comes from these counts)', { solver: 'qaoa', problem: routeProblem(3), substrate: 'vendor-eagle', seed: 5 }],
    ['grover pattern search', { solver: 'grover', problem: patternProblem(16, 11), substrate: 'vendor-eagle', shots: 128, seed: 3 }],
  ];
  for (const [name, request] of requests) {
    it(`${name}: each malformed result is 502 substrate_provider_error naming what was wrong`, async () => {
      for (const [what, body, message] of cases) {
        provider.options.resultsBody = body;
        const error = await rejects(svc.solve(request), 502, 'substrate_provider_error');
        assert.match(error.message, message, what);
        assert.match(error.message, /^The hardware provider at http:\/\/127\.0\.0\.1:\d+ sent /, what);
      }
      // The same service, with honest results again, answers.
      provider.options.resultsBody = undefined;
      const res = (await svc.solve(request)) as SolveResponse;
      assert.equal(res.status, 'completed');
    });
  }
});
