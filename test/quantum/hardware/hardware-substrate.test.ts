import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError } from '../../../src/shared/api-error.ts';
import { createHardwareSubstrate, resolveHardwareConfig, type HardwareConfig } from '../../../src/quantum/hardware/hardware-config.ts';
import { parseDuration } from '../../../src/runtime/runtime-config.ts';
import { SolveService } from '../../../src/quantum/solve-service.ts';
import type { BatchResponse, SolveResponse } from '../../../src/quantum/solve-schemas.ts';
import { startMockQuantumProvider, type MockProvider } from '../../helpers/mock-quantum-provider.ts';
import { patternProblem, portfolioProblem, routeProblem } from '../fixtures.ts';

const TOKEN = 'tok-3f9a7c21-not-a-real-token';

function config(url: string, extra: Partial<HardwareConfig> = {}): HardwareConfig {
  return { ...resolveHardwareConfig({ quantumProvider: url, quantumBackend: 'ibm_brisbane', quantumTimeout: '20s', quantumPoll: '20ms' }, parseDuration)!, ...extra };
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
    assert.match(error.message, /job-1 did not finish within 0 s|job-1 did not finish/);
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
    assert.throws(() => resolveHardwareConfig({ quantumBackend: 'ibm_brisbane' }, parseDuration), /needs --quantum-provider/);
    assert.throws(() => resolveHardwareConfig({ quantumProvider: 'https://q.example/api/v1' }, parseDuration), /needs --quantum-backend/);
    assert.throws(() => resolveHardwareConfig({ quantumProvider: 'https://u:p@q.example/api/v1', quantumBackend: 'b' }, parseDuration), /no credentials/);
    assert.equal(resolveHardwareConfig({}, parseDuration), undefined);
  });
});
