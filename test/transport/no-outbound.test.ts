/**
 * "The local substrate opens no outbound connection, and the daemon listens only on the loopback
 * address." A real daemon (child process, tiny GGUF model, no upstream, telemetry off) serves
 * every local endpoint while its sockets are watched from outside through /proc; health's own
 * counters must agree. The second case configures upstreams so both the watcher and the counters
 * have something to see: the test can fail.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { ProcSocketWatch, type SeenSocket } from '../helpers/proc-sockets.ts';
import { exerciseEveryEndpoint, expect, health, JSON_HEADERS, type OutboundHealth } from '../helpers/every-endpoint.ts';
import { sse, startScriptedUpstream } from '../helpers/scripted-upstream.ts';

/** Starts the daemon with the watcher polling from the moment the process exists. */
async function watchedDaemon(args: string[] = []): Promise<{ daemon: DaemonProcess; watch: ProcSocketWatch }> {
  let watch: ProcSocketWatch | undefined;
  const daemon = await startDaemon({
    args,
    onSpawn: (child) => {
      watch = new ProcSocketWatch(child.pid!);
      watch.start();
    },
  });
  return { daemon, watch: watch! };
}

function describeSockets(sockets: SeenSocket[]): string {
  return sockets.map((s) => `${s.table} ${s.state} ${s.local} -> ${s.remote}`).join('; ');
}

/** An IPv4 address of this machine off loopback, to stand for "another host" without leaving the machine. */
function ownNonLoopbackAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (!entry.internal && entry.family === 'IPv4') return entry.address;
  }
  return undefined;
}

describe('no outbound traffic, loopback only', { skip: ProcSocketWatch.available() ? false : 'needs Linux /proc to watch the daemon\'s sockets' }, () => {
  test('every local endpoint: no socket off loopback, only loopback listeners, health counts no outbound connection', { timeout: 180_000 }, async () => {
    const { daemon, watch } = await watchedDaemon();
    let before: OutboundHealth;
    let afterAll: OutboundHealth;
    try {
      before = await health(daemon.url);
      await exerciseEveryEndpoint(daemon.url);
      afterAll = await health(daemon.url);
    } finally {
      await watch.stop();
      assert.equal(await daemon.stop(), 0);
    }
    const seen = [...watch.seen.values()];
    assert.ok(watch.polls > 0, 'the watcher looked');
    // The watcher saw the daemon's own sockets, so it was looking at the right process.
    const listeners = seen.filter((s) => s.state === 'LISTEN');
    assert.ok(listeners.length >= 1, 'listening sockets seen');
    assert.ok(seen.some((s) => s.state === 'ESTABLISHED'), 'accepted connections seen');
    assert.deepEqual(watch.offLoopback(), [], `sockets off loopback: ${describeSockets(watch.offLoopback())}`);
    // Listening only on loopback, as health says too.
    for (const l of listeners) assert.ok(l.localIp === '127.0.0.1' || l.localIp === '::1', `listening on ${l.local}`);
    assert.equal(afterAll.network.loopback_only, true);

    assert.equal(afterAll.telemetry, 'none');
    assert.equal(before.outbound_connections, 0);
    assert.equal(afterAll.outbound_connections, 0);
    assert.equal(afterAll.outbound_connections_total, 0);
    // The MCP tools' calls to the daemon itself are local connections, counted apart.
    assert.ok(afterAll.local_connections.total >= 1, `local connections: ${JSON.stringify(afterAll.local_connections)}`);
  });

  test('with upstreams configured, the counters and the watcher see their connections', { timeout: 60_000 }, async () => {
    // A remote upstream reached through loopback (a tunnel, say): declared remote, so counted.
    const tunnelled = await startScriptedUpstream(sse([
      { choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      'data: [DONE]',
    ]));
    // And one on this machine's own non-loopback address, which the watcher sees as off loopback.
    const lanAddress = ownNonLoopbackAddress();
    let lan: Server | undefined;
    // It holds each request until released, so the daemon's socket to it is open while we look.
    let release = (): void => {};
    const released = new Promise<void>((resolve) => { release = resolve; });
    if (lanAddress !== undefined) {
      lan = createServer((_req, res) => void released.then(() => res.writeHead(503, JSON_HEADERS).end('{"error":{"message":"busy"}}')));
      lan.listen(0, lanAddress);
      await once(lan, 'listening');
    }
    const dir = mkdtempSync(join(tmpdir(), 'svc-outbound-'));
    const config = join(dir, 'config.toml');
    writeFileSync(config, [
      '[[upstreams]]', 'name = "tunnel"', `base_url = "${tunnelled.baseUrl}"`, 'kind = "remote"', 'models = ["m"]', 'discover = false', '',
      ...(lan === undefined ? [] : ['[[upstreams]]', 'name = "lan"', `base_url = "http://${lanAddress}:${(lan.address() as AddressInfo).port}/v1"`, 'models = ["m"]', 'discover = false']),
    ].join('\n'));
    const { daemon, watch } = await watchedDaemon(['--config', config]);
    const totals: number[] = [];
    let liveDuringLan = 0;
    try {
      // Upstreams listed from config, not discovered: nothing is dialled until a request needs it.
      totals.push((await health(daemon.url)).outbound_connections_total);
      await expect(daemon.url, 'POST', '/v1/chat/completions', 200, { model: 'tunnel/m', messages: [{ role: 'user', content: 'x' }] });
      totals.push((await health(daemon.url)).outbound_connections_total);
      if (lan !== undefined) {
        const pending = expect(daemon.url, 'POST', '/v1/chat/completions', 503, { model: 'lan/m', messages: [{ role: 'user', content: 'x' }] });
        // Bounded, so a watcher that never sees it fails below instead of hanging.
        for (let i = 0; i < 1000 && !watch.offLoopback().some((s) => s.remoteIp === lanAddress); i++) await new Promise((r) => setTimeout(r, 10));
        liveDuringLan = (await health(daemon.url)).outbound_connections;
        release();
        await pending;
        totals.push((await health(daemon.url)).outbound_connections_total);
      }
    } finally {
      release();
      await watch.stop();
      await daemon.stop();
      await tunnelled.close();
      lan?.close();
    }
    assert.equal(totals[0], 0, 'nothing dialled before a request needs an upstream');
    // Each upstream's first request opened at least one more outbound socket.
    for (let i = 1; i < totals.length; i++) assert.ok(totals[i]! > totals[i - 1]!, `outbound totals: ${totals.join(' → ')}`);
    if (lan !== undefined) {
      assert.ok(liveDuringLan >= 1, 'health counted the open connection to the non-loopback address');
      const off = watch.offLoopback().filter((s) => s.state !== 'LISTEN');
      assert.ok(off.some((s) => s.remoteIp === lanAddress), `the watcher saw the connection to ${lanAddress}: ${describeSockets(off)}`);
    }
  });
});
