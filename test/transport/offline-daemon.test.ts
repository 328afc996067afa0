/**
 * "An offline installation is possible": the daemon starts and serves with no network at all.
 * It runs in a fresh network namespace (`unshare -rn`: an unprivileged user and network
 * namespace holding nothing but a loopback interface, brought up), and the client runs in the
 * same namespace through `nsenter`, since the daemon's 127.0.0.1 is not the test's. Health, a
 * chat on the fixture model and a solve must work there. Machines without unprivileged user
 * namespaces (or without unshare/nsenter) skip with the reason.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { startDaemon } from '../helpers/daemon-process.ts';
import { portfolioProblem } from '../quantum/fixtures.ts';

/** Runs the CLI in a new user + network namespace with only `lo`, up. */
const OFFLINE = ['unshare', '-rn', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh'];

/** Why the namespace cannot be made here, or undefined when it can. */
function whyNoNamespace(): string | undefined {
  const made = spawnSync(OFFLINE[0]!, [...OFFLINE.slice(1), 'true'], { encoding: 'utf8' });
  if (made.error !== undefined || made.status !== 0) return `unshare -rn is not available here (${made.error?.message ?? made.stderr.trim()})`;
  const nsenter = spawnSync('nsenter', ['--version'], { encoding: 'utf8' });
  if (nsenter.error !== undefined) return `nsenter is not available here (${nsenter.error.message})`;
  return undefined;
}

/**
 * The client, run inside the daemon's namespaces: the interfaces it sees, then health, a chat
 * and a solve, printed as one JSON line.
 */
const PROBE = `
import { networkInterfaces } from 'node:os';
const [base, solve] = process.argv.slice(1);
const post = (path, body) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const answer = async (response) => ({ status: response.status, body: await response.json() });
const out = {
  interfaces: Object.keys(networkInterfaces()),
  health: await answer(await fetch(base + '/health')),
  chat: await answer(await post('/v1/chat/completions', JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4, temperature: 0 }))),
  solve: await answer(await post('/api/solve', solve)),
};
console.log(JSON.stringify(out));
`;

function runInNamespaceOf(pid: number, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('nsenter', ['--preserve-credentials', '-U', '-n', '-t', String(pid), ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

test('with networking unavailable the daemon starts and serves health, a chat and a solve', { timeout: 90_000 }, async (t) => {
  const reason = whyNoNamespace();
  if (reason !== undefined) {
    t.skip(reason);
    return;
  }
  const daemon = await startDaemon({ wrap: OFFLINE });
  try {
    const probe = await runInNamespaceOf(daemon.child.pid!, [process.execPath, '--input-type=module', '-e', PROBE, daemon.url, JSON.stringify({ solver: 'qubo', problem: portfolioProblem(), shots: 64 })]);
    assert.equal(probe.code, 0, probe.stderr);
    const out = JSON.parse(probe.stdout) as {
      interfaces: string[];
      health: { status: number; body: { status: string; outbound_connections: number; outbound_connections_total: number; network: { loopback_only: boolean } } };
      chat: { status: number; body: { choices: { message: { content: string } }[] } };
      solve: { status: number; body: { status: string; solution: { selected: string[] } } };
    };
    // Nothing but loopback: no route off the machine exists in here.
    assert.deepEqual(out.interfaces, ['lo']);
    assert.equal(out.health.status, 200);
    assert.equal(out.health.body.status, 'ok');
    assert.equal(out.health.body.network.loopback_only, true);
    assert.equal(out.health.body.outbound_connections_total, 0);
    assert.equal(out.chat.status, 200, JSON.stringify(out.chat.body));
    assert.equal(typeof out.chat.body.choices[0]?.message.content, 'string');
    assert.equal(out.solve.status, 200, JSON.stringify(out.solve.body));
    assert.equal(out.solve.body.status, 'completed');
    assert.ok(out.solve.body.solution.selected.length > 0);
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});
