/**
 * The hardware substrate's options of `svc serve` through the real command definition: off by
 * default, flags, SVC_QUANTUM_* variables and config-file keys, and the checks that refuse a
 * half-configured provider.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/shared/config-values.ts';
import { loadServeArgs as load } from '../helpers/serve-config.ts';

describe('svc serve --quantum-* options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-quantum-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('no provider by default: vendor-eagle stays off and nothing goes out', async () => {
    assert.equal((await load(['--data-dir', dir])).hardware, undefined);
  });

  it('takes flags, SVC_QUANTUM_* variables and config-file keys', async () => {
    const want = { providerUrl: 'https://quantum.example/api/v1', backend: 'ibm_brisbane', instance: 'crn:v1:x', apiVersion: '2025-05-01', timeoutMs: 300_000, deadlineMs: 2_700_000, pollMs: 500 };
    assert.deepEqual((await load(['--data-dir', dir, '--quantum-provider', 'https://quantum.example/api/v1/', '--quantum-backend', 'ibm_brisbane', '--quantum-instance', 'crn:v1:x', '--quantum-api-version', '2025-05-01', '--quantum-timeout', '5m', '--quantum-deadline', '45m', '--quantum-poll', '500ms'])).hardware, want);
    assert.deepEqual((await load(['--data-dir', dir], { SVC_QUANTUM_PROVIDER: 'https://quantum.example/api/v1', SVC_QUANTUM_BACKEND: 'ibm_brisbane', SVC_QUANTUM_INSTANCE: 'crn:v1:x', SVC_QUANTUM_API_VERSION: '2025-05-01', SVC_QUANTUM_TIMEOUT: '300s', SVC_QUANTUM_DEADLINE: '45m', SVC_QUANTUM_POLL: '500ms' })).hardware, want);
    const file = join(dir, 'quantum.toml');
    writeFileSync(file, 'quantum_provider = "https://quantum.example/api/v1"\nquantum_backend = "ibm_brisbane"\n');
    assert.deepEqual((await load(['--data-dir', dir, '--config', file])).hardware, { ...want, instance: undefined, apiVersion: undefined, timeoutMs: 600_000, deadlineMs: 1_800_000, pollMs: 2000 });
    writeFileSync(file, 'quantum_provider = "https://quantum.example/api/v1"\nquantum_backend = "ibm_brisbane"\nquantum_deadline = "45m"\n');
    assert.equal((await load(['--data-dir', dir, '--config', file])).hardware?.deadlineMs, 2_700_000);
  });

  it('refuses a backend without a provider, a provider without a backend, a non-http URL, a zero timeout and a deadline under 100 ms or over a day', async () => {
    const refused = (flag: RegExp) => (e: unknown) => e instanceof ConfigError && flag.test(e.message);
    await assert.rejects(load(['--data-dir', dir, '--quantum-backend', 'ibm_brisbane']), refused(/--quantum-backend needs --quantum-provider/));
    await assert.rejects(load(['--data-dir', dir, '--quantum-provider', 'https://quantum.example/api/v1']), refused(/needs --quantum-backend/));
    await assert.rejects(load(['--data-dir', dir, '--quantum-provider', 'ftp://quantum.example', '--quantum-backend', 'b']), refused(/http\(s\) URL/));
    await assert.rejects(load(['--data-dir', dir, '--quantum-provider', 'https://q.example', '--quantum-backend', 'b', '--quantum-timeout', '0']), refused(/--quantum-timeout/));
    await assert.rejects(load(['--data-dir', dir, '--quantum-provider', 'https://q.example', '--quantum-backend', 'b', '--quantum-deadline', '10ms']), refused(/--quantum-deadline/));
    await assert.rejects(load(['--data-dir', dir, '--quantum-provider', 'https://q.example', '--quantum-backend', 'b', '--quantum-deadline', '720h']), refused(/--quantum-deadline: '720h' must be a duration from 100ms to 24h/));
  });
});
