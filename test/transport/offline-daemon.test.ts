/**
 * "An offline installation is possible": the daemon starts and serves with no network at all.
 * It runs in a fresh network namespace (`unshare -rn`: an unprivileged user and network
 * namespace holding nothing but a loopback interface, brought up), and the client runs in the
 * same namespace through `nsenter`, since the daemon's 127.0.0.1 is not the test's. Health, a
 * chat on the fixture model and a solve must work there, and then every endpoint
 * (test/helpers/every-endpoint.ts). The namespace's own counters say whether anything tried to
 * leave: a TCP connect or UDP send to an address off loopback raises `Ip: OutNoRoutes` (there is
 * no route; a UDP datagram that does go out raises `Udp: OutDatagrams`), however briefly the socket lived, which the
 * /proc socket watch of no-outbound.test.ts can miss. Machines without unprivileged user
 * namespaces (or without unshare/nsenter) skip with the reason.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
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

const EVERY_ENDPOINT = fileURLToPath(new URL('../helpers/every-endpoint.ts', import.meta.url));

/** `Ip: OutNoRoutes` and `Udp: OutDatagrams` of the network namespace `pid` is in. */
function netCounters(pid: number): { outNoRoutes: number; udpOutDatagrams: number } {
  const lines = readFileSync(`/proc/${pid}/net/snmp`, 'utf8').split('\n');
  // The file pairs a header line (`Ip: Forwarding DefaultTTL …`) with a values line (`Ip: 1 64 …`).
  const field = (proto: string, name: string): number => {
    const [header, values] = lines.filter((l) => l.startsWith(`${proto}: `)).map((l) => l.split(/\s+/));
    const index = header?.indexOf(name) ?? -1;
    assert.ok(index > 0 && values !== undefined, `${proto} ${name} in /proc/${pid}/net/snmp`);
    return Number(values[index]);
  };
  return { outNoRoutes: field('Ip', 'OutNoRoutes'), udpOutDatagrams: field('Udp', 'OutDatagrams') };
}

/** A brief TCP connect to 10.1.2.3 and a UDP send to 8.8.8.8: what the counters must catch. */
const LEAK = `
import { connect } from 'node:net';
import { createSocket } from 'node:dgram';
await new Promise((resolve) => connect(80, '10.1.2.3').once('error', resolve).once('connect', resolve));
const udp = createSocket('udp4');
await new Promise((resolve) => udp.send('x', 53, '8.8.8.8', resolve));
udp.close();
`;

function runInNamespaceOf(pid: number, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('nsenter', ['--preserve-credentials', '-U', '-n', '-t', String(pid), ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

test('with networking unavailable the daemon starts and serves health, a chat, a solve and every endpoint, and nothing tries to leave', { timeout: 240_000 }, async (t) => {
  const reason = whyNoNamespace();
  if (reason !== undefined) {
    t.skip(reason);
    return;
  }
  const daemon = await startDaemon({ wrap: OFFLINE });
  try {
    const pid = daemon.child.pid!;
    const before = netCounters(pid);
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

    const every = await runInNamespaceOf(pid, [process.execPath, EVERY_ENDPOINT, daemon.url]);
    assert.equal(every.code, 0, every.stderr);
    const after = netCounters(pid);
    assert.deepEqual(after, before, 'nothing in the namespace tried to reach an address off loopback');

    // The counters catch an attempt that lasts well under a millisecond, so the check above can fail.
    const leak = await runInNamespaceOf(pid, [process.execPath, '--input-type=module', '-e', LEAK]);
    assert.equal(leak.code, 0, leak.stderr);
    const leaked = netCounters(pid);
    // One for the TCP connect, one for the UDP send (refused for want of a route, so not an OutDatagram).
    assert.ok(leaked.outNoRoutes >= after.outNoRoutes + 2, `OutNoRoutes ${after.outNoRoutes} → ${leaked.outNoRoutes}`);
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});
