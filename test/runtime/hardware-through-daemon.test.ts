/**
 * `svc serve --quantum-provider …`: the vendor-eagle substrate in the real daemon, against a
 * local provider that runs the submitted QASM on svc's simulator. The token comes from the
 * environment and must never reach the daemon's log, whatever the outcome.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDaemon } from '../helpers/daemon-process.ts';
import { startMockQuantumProvider } from '../helpers/mock-quantum-provider.ts';
import { patternProblem } from '../quantum/fixtures.ts';

const TOKEN = 'qtok-91c2e0d7-daemon-log-canary';

async function daemonFor(providerUrl: string, token: string, extra: string[] = []) {
  return startDaemon({
    withModel: false,
    args: ['--quantum-provider', providerUrl, '--quantum-backend', 'ibm_brisbane', '--quantum-poll', '20ms', '--log-level', 'trace', ...extra],
    env: { SVC_QUANTUM_TOKEN: token },
  });
}

const solve = (url: string) =>
  fetch(`${url}/api/solve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ solver: 'grover', problem: patternProblem(16, 13), substrate: 'vendor-eagle', seed: 4 }) });

test('a hardware solve through the daemon: the answer, the job, health; the token only in the provider\'s Authorization header', async () => {
  const provider = await startMockQuantumProvider({ token: TOKEN });
  const daemon = await daemonFor(provider.url, TOKEN);
  try {
    const res = await solve(daemon.url);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { substrate: string; solution: { target_index: number; hardware: { jobs: { provider_job_id: string; backend: string }[] } } };
    assert.equal(body.substrate, 'vendor-eagle');
    assert.equal(body.solution.target_index, 13);
    assert.deepEqual(body.solution.hardware.jobs.map((j) => [j.provider_job_id, j.backend]), [['job-1', 'ibm_brisbane']]);
    assert.ok(provider.authorizations.length >= 3 && provider.authorizations.every((a) => a === `Bearer ${TOKEN}`));
    const health = (await (await fetch(`${daemon.url}/health`)).json()) as { quantum: { substrates: Record<string, string> } };
    assert.equal(health.quantum.substrates['vendor-eagle'], 'configured');
  } finally {
    assert.equal(await daemon.stop(), 0);
    await provider.close();
  }
  const log = JSON.stringify(daemon.logs) + daemon.stderr();
  assert.match(log, /vendor-eagle: ibm_brisbane at http:\/\/127\.0\.0\.1/);
  assert.ok(!log.includes(TOKEN), 'the token reached the log');
});

test('a token the provider refuses: 502 in the envelope, and still no token in the log', async () => {
  const provider = await startMockQuantumProvider({ token: 'another-token' });
  const daemon = await daemonFor(provider.url, TOKEN);
  try {
    const res = await solve(daemon.url);
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'substrate_auth_failed');
    assert.ok(!body.error.message.includes(TOKEN));
  } finally {
    assert.equal(await daemon.stop(), 0);
    await provider.close();
  }
  assert.ok(!(JSON.stringify(daemon.logs) + daemon.stderr()).includes(TOKEN), 'the token reached the log');
});

test('a client that hangs up while its hardware job waits: the daemon cancels the provider job', { timeout: 60_000 }, async (t) => {
  const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
  const daemon = await daemonFor(provider.url, TOKEN);
  try {
    const controller = new AbortController();
    const pending = fetch(`${daemon.url}/api/solve`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
      body: JSON.stringify({ solver: 'grover', problem: patternProblem(16, 13), substrate: 'vendor-eagle', seed: 4 }),
    }).catch((error: unknown) => error);
    // The loops end with the test (t.signal), so a broken link fails the test instead of hanging the run.
    while ((provider.jobs[0]?.polls ?? 0) === 0 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    assert.equal(((await pending) as Error).name, 'AbortError');
    // Without the link from the closed request to the provider call, the job would be polled
    // until --quantum-timeout (10 min by default) and this wait would run into the test's timeout.
    while (provider.cancelled.length === 0 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(provider.cancelled, ['job-1']);
  } finally {
    assert.equal(await daemon.stop(), 0);
    await provider.close();
  }
});

test('--quantum-deadline: a job that never finishes is 504 substrate_timeout in the envelope, and the provider job is cancelled', { timeout: 60_000 }, async (t) => {
  const provider = await startMockQuantumProvider({ token: TOKEN, behaviour: 'never' });
  const daemon = await daemonFor(provider.url, TOKEN, ['--quantum-deadline', '5s']);
  try {
    const res = await solve(daemon.url);
    assert.equal(res.status, 504);
    const body = (await res.json()) as { error: { type: string; code: string; param: string; message: string } };
    assert.deepEqual([body.error.type, body.error.code, body.error.param], ['server_error', 'substrate_timeout', 'substrate']);
    assert.match(body.error.message, /deadline of 5 s \(--quantum-deadline\): provider job job-1 had not finished/);
    while (provider.cancelled.length === 0 && !t.signal.aborted) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(provider.cancelled, ['job-1']);
  } finally {
    assert.equal(await daemon.stop(), 0);
    await provider.close();
  }
});
