import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/shared/api-error.ts';
import { Secret } from '../../../src/shared/secret.ts';
import { Circuit } from '../../../src/quantum/simulator/circuit.ts';
import { transpileToIsa } from '../../../src/quantum/hardware/isa-transpiler.ts';
import { isTerminalFailure, RuntimeSamplerClient } from '../../../src/quantum/hardware/runtime-sampler-client.ts';
import { startMockQuantumProvider, type MockProvider, type MockProviderOptions } from '../../helpers/mock-quantum-provider.ts';

const TOKEN = 'tok-77c1-sampler-client-test';
// |10⟩ on two qubits: c = 0b01 (logical qubit 0 is bit 0).
const QASM = transpileToIsa(new Circuit(2).x(0).measureAll()).qasm;

async function withProvider<T>(options: Omit<MockProviderOptions, 'token'>, timeoutMs: number, body: (client: RuntimeSamplerClient, cancelled: string[], provider: MockProvider) => Promise<T>): Promise<T> {
  const provider = await startMockQuantumProvider({ token: TOKEN, ...options });
  const client = new RuntimeSamplerClient({ baseUrl: provider.url, backend: 'ibm_brisbane', token: new Secret(TOKEN), tokenEnv: 'SVC_QUANTUM_TOKEN', timeoutMs, pollMs: 10, maxPollMs: 40 });
  try {
    return await body(client, provider.cancelled, provider);
  } finally {
    await provider.close();
  }
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    assert.ok(!error.message.includes(TOKEN), error.message);
    return error;
  }
  assert.fail('expected a refusal');
}

describe('RuntimeSamplerClient: giving up on a job cancels it; hiccups are retried; any cancel/fail/error status is the end', () => {
  it('statuses: IBM\'s "Cancelled - Ran too long" and "Canceled - …" are terminal; Queued and Running are not', () => {
    for (const s of ['Failed', 'FAILED', 'Cancelled', 'Cancelled - Ran too long', 'Canceled - by user', 'ERROR', 'error: backend offline']) assert.ok(isTerminalFailure(s), s);
    for (const s of ['Queued', 'Running', 'Initializing', 'Validating', 'Completed']) assert.ok(!isTerminalFailure(s), s);
  });

  it('a job that ends "Cancelled - Ran too long" is 502 substrate_job_failed at once, not a poll until the deadline', async () => {
    const error = await withProvider({ behaviour: 'fail', failStatus: 'Cancelled - Ran too long', failReason: 'ran past the max execution time' }, 5000, (client) => refusal(client.sample({ qasm: QASM, shots: 16, bits: 2 })));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'substrate_job_failed');
    assert.match(error.message, /ended Cancelled - Ran too long: ran past the max execution time/);
  });

  it('a failure reason that echoes the token is redacted', async () => {
    const error = await withProvider({ behaviour: 'fail', failReason: `bad credential ${TOKEN} for instance` }, 5000, (client) => refusal(client.sample({ qasm: QASM, shots: 16, bits: 2 })));
    assert.equal(error.code, 'substrate_job_failed');
    assert.match(error.message, /bad credential \[redacted\] for instance/);
  });

  it('status GETs answered 503 a few times are retried until the job completes', async () => {
    const result = await withProvider({ flakyStatusGets: 3 }, 10_000, (client) => client.sample({ qasm: QASM, shots: 32, bits: 2 }));
    assert.equal(result.shots, 32);
    assert.deepEqual([...result.counts], [[1, 32]]);
  });

  it('a status GET the provider refuses (HTTP 400) is 502, and the job it created is cancelled', async () => {
    await withProvider({ statusHttpError: 400 }, 10_000, async (client, cancelled) => {
      const error = await refusal(client.sample({ qasm: QASM, shots: 16, bits: 2 }));
      assert.equal(error.status, 502);
      assert.equal(error.code, 'substrate_provider_error');
      assert.deepEqual(cancelled, ['job-1']);
    });
  });

  it('an abort signal (shutdown, client gone) cancels the running job and rejects with the signal\'s reason', async () => {
    await withProvider({ behaviour: 'never' }, 60_000, async (client, cancelled, provider) => {
      const controller = new AbortController();
      const pending = refusal(client.sample({ qasm: QASM, shots: 16, bits: 2, signal: controller.signal }));
      // Abort once the job exists and has been polled.
      while ((provider.jobs[0]?.polls ?? 0) === 0) await new Promise((r) => setTimeout(r, 10));
      controller.abort(ApiError.busy('closing', 5, 503, 'shutting_down'));
      const error = await pending;
      assert.equal(error.code, 'shutting_down');
      assert.deepEqual(cancelled, ['job-1']);
    });
  });

  it('a caller who gives up while POST /jobs is out still has the job it created cancelled once its id arrives', async () => {
    await withProvider({ behaviour: 'never', createDelayMs: 300 }, 60_000, async (client, cancelled, provider) => {
      const controller = new AbortController();
      const pending = refusal(client.sample({ qasm: QASM, shots: 16, bits: 2, signal: controller.signal }));
      // The provider has created the job; its answer (with the id) is still on the way.
      while (provider.jobs.length === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort(ApiError.busy('closing', 5, 503, 'shutting_down'));
      const error = await pending;
      assert.equal(error.code, 'shutting_down');
      assert.deepEqual(cancelled, ['job-1']);
      assert.equal(provider.jobs[0]!.polls, 0, 'never polled after giving up');
    });
  });
});
