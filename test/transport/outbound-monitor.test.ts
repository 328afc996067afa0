/**
 * The monitor on real sockets: TCP, TLS, HTTP through Node's fetch and UDP, to loopback and to
 * this machine's own non-loopback address (the one address off loopback a test can reach
 * without leaving the machine).
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { after, before, test } from 'node:test';
import { isLoopbackIp, OutboundMonitor } from '../../src/transport/outbound-monitor.ts';

let server: Server;
let port: number;

before(async () => {
  // Accepts and holds connections; a TLS client gets no handshake, which is enough to be counted.
  server = createServer((s) => s.on('error', () => {}));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(() => server.close());

async function connected(socket: Socket): Promise<Socket> {
  await once(socket, 'connect');
  return socket;
}

/** Destroys the socket and waits for its 'close' event (what the monitor counts on). */
async function closed(socket: Socket): Promise<void> {
  const event = once(socket, 'close');
  socket.destroy();
  await event;
}

/** An IPv4 address of this machine that is not loopback, if it has one. */
function ownNonLoopbackAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (!entry.internal && entry.family === 'IPv4') return entry.address;
  }
  return undefined;
}

test('isLoopbackIp: 127/8, ::1 and mapped forms; nothing else', () => {
  for (const ip of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) assert.equal(isLoopbackIp(ip), true, ip);
  for (const ip of ['10.0.0.1', '192.0.2.2', '::ffff:10.0.0.1', 'fd00::2', '0.0.0.0', '::', 'localhost', '/tmp/x.sock', '']) assert.equal(isLoopbackIp(ip), false, ip);
});

test('loopback TCP, TLS and fetch are local: open while open, totals kept after close', async () => {
  const monitor = new OutboundMonitor();
  monitor.start();
  try {
    const plain = await connected(connect(port, '127.0.0.1'));
    const tls = tlsConnect({ port, host: '127.0.0.1' });
    tls.on('error', () => {});
    await once(tls, 'connect');
    assert.deepEqual(monitor.counts(), { outbound: { open: 0, total: 0 }, local: { open: 2, total: 2 } });
    await closed(plain);
    await closed(tls);
    assert.deepEqual(monitor.counts().local, { open: 0, total: 2 });

    const http = createHttpServer((_req, res) => res.end('ok'));
    http.listen(0, '::1');
    await once(http, 'listening');
    try {
      const response = await fetch(`http://[::1]:${(http.address() as AddressInfo).port}/`, { headers: { connection: 'close' } });
      assert.equal(await response.text(), 'ok');
    } finally {
      http.closeAllConnections();
      http.close();
    }
    assert.equal(monitor.counts().local.total, 3);
    assert.deepEqual(monitor.counts().outbound, { open: 0, total: 0 });
    assert.deepEqual(monitor.health(), { outbound_connections: 0, outbound_connections_total: 0, local_connections: monitor.counts().local });
  } finally {
    monitor.stop();
  }
});

test('a connection to a non-loopback address is outbound', async (t) => {
  const address = ownNonLoopbackAddress();
  if (address === undefined) {
    t.skip('this machine has no non-loopback IPv4 address to connect to');
    return;
  }
  const remote = createServer((s) => s.on('error', () => {}));
  remote.listen(0, address);
  await once(remote, 'listening');
  const monitor = new OutboundMonitor();
  monitor.start();
  try {
    const socket = await connected(connect((remote.address() as AddressInfo).port, address));
    assert.deepEqual(monitor.health(), { outbound_connections: 1, outbound_connections_total: 1, local_connections: { open: 0, total: 0 } });
    await closed(socket);
    assert.deepEqual(monitor.counts().outbound, { open: 0, total: 1 });
  } finally {
    monitor.stop();
    remote.close();
  }
});

test('countAsOutbound moves a loopback socket (a tunnelled remote upstream) to outbound', async () => {
  const monitor = new OutboundMonitor();
  monitor.start();
  try {
    const socket = await connected(connect(port, '127.0.0.1'));
    monitor.countAsOutbound(socket);
    monitor.countAsOutbound(socket);
    assert.deepEqual(monitor.counts(), { outbound: { open: 1, total: 1 }, local: { open: 0, total: 1 } });
    await closed(socket);
    assert.deepEqual(monitor.counts(), { outbound: { open: 0, total: 1 }, local: { open: 0, total: 1 } });
    // A socket the monitor never saw changes nothing.
    monitor.countAsOutbound({});
    assert.equal(monitor.counts().outbound.total, 1);
  } finally {
    monitor.stop();
  }
});

test('every UDP socket is outbound (it can send anywhere) until closed', async () => {
  const monitor = new OutboundMonitor();
  monitor.start();
  try {
    const udp = createSocket('udp4');
    assert.deepEqual(monitor.counts().outbound, { open: 1, total: 1 });
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    assert.deepEqual(monitor.counts().outbound, { open: 0, total: 1 });
  } finally {
    monitor.stop();
  }
});

test('after stop, new sockets are not counted', async () => {
  const monitor = new OutboundMonitor();
  monitor.start();
  monitor.stop();
  const socket = await connected(connect(port, '127.0.0.1'));
  await closed(socket);
  assert.deepEqual(monitor.counts(), { outbound: { open: 0, total: 0 }, local: { open: 0, total: 0 } });
});
