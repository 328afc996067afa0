import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { test, type TestContext } from 'node:test';
import { createHttpServer } from '../../src/http/http-server.ts';
import { trackNegotiatedGroups } from '../../src/transport/negotiated-group.ts';
import { parsePqcTransport } from '../../src/transport/pqc-transport-options.ts';
import { TransportSecurity } from '../../src/transport/transport-security.ts';

/** An HTTPS server made as the daemon makes its listeners, answering each request with its connection's transport health. */
async function serve(t: TestContext, list: string): Promise<{ port: number; transport: TransportSecurity }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-groups-'));
  const transport = new TransportSecurity(parsePqcTransport(list)!, { dataDir, hosts: ['127.0.0.1'] });
  const server = createHttpServer(5_000, (request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(transport.health(request.socket)));
  }, undefined, transport);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { port: (server.address() as AddressInfo).port, transport };
}

interface Exchange { clientGroup: string | undefined; health: { tls: string; cipher: { suite: string; group: string; certificate: string } } }

/** One request over a TLS connection that offers `ecdhCurve` (OpenSSL syntax: `*` marks a key share). */
function exchange(port: number, ca: string, ecdhCurve: string | undefined): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...(ecdhCurve === undefined ? {} : { ecdhCurve }) }, () => {
      const clientGroup = (socket.getEphemeralKeyInfo() as { name?: string } | null)?.name;
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      let text = '';
      socket.on('data', (d: Buffer) => { text += d.toString(); });
      socket.on('end', () => resolve({ clientGroup, health: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Exchange['health'] }));
    });
    socket.on('error', reject);
  });
}

test('the group health reports is the one the client negotiated, for every mix of key shares and supported groups', async (t) => {
  const { port, transport } = await serve(t, 'ml-kem-1024,ml-kem-768,ml-dsa-65');
  const ca = transport.identity.certificatePem;
  const offers = [
    undefined, // Node's default: X25519MLKEM768 with a key share, then classical groups
    'X25519MLKEM768', 'MLKEM768', 'MLKEM1024', 'SecP384r1MLKEM1024',
    '*MLKEM768:*X25519MLKEM768', '*X25519MLKEM768:*MLKEM768', '*MLKEM768:*MLKEM1024',
    'X25519:MLKEM768', // key share for X25519 only: HelloRetryRequest
    'X25519:X25519MLKEM768:MLKEM768', 'X25519:MLKEM768:X25519MLKEM768', 'P-256:MLKEM1024:MLKEM768',
    'MLKEM768:X25519MLKEM768',
  ];
  for (const offer of offers) {
    const { clientGroup, health } = await exchange(port, ca, offer);
    assert.ok(clientGroup !== undefined, `client offering ${offer ?? 'the default'} reports its group`);
    assert.equal(health.cipher.group, clientGroup, `offer ${offer ?? 'default'}`);
    assert.equal(health.tls, 'TLSv1.3');
    assert.match(health.cipher.suite, /^TLS_(AES_256_GCM_SHA384|AES_128_GCM_SHA256|CHACHA20_POLY1305_SHA256)$/);
    assert.equal(health.cipher.certificate, 'ml-dsa-65');
  }
});

test('a client offering only classical groups, or TLS 1.2, fails the handshake cleanly; the server goes on serving', async (t) => {
  const { port, transport } = await serve(t, 'ml-kem-768');
  const ca = transport.identity.certificatePem;
  for (const options of [{ ecdhCurve: 'X25519:P-256:P-384' }, { maxVersion: 'TLSv1.2' as const }]) {
    const error = await new Promise<Error & { code?: string }>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...options }, () => reject(new Error('handshake succeeded')));
      socket.on('error', resolve);
    });
    assert.match(error.code ?? '', /ERR_SSL_(SSL\/TLS_ALERT_HANDSHAKE_FAILURE|TLSV1_ALERT_PROTOCOL_VERSION)/, JSON.stringify(options));
  }
  const { health } = await exchange(port, ca, undefined);
  assert.equal(health.cipher.group, 'X25519MLKEM768');
  assert.equal(health.cipher.certificate, 'ecdsa-p256');
});

test('plain HTTP on the HTTPS port is answered with a 400 in the envelope saying to use https', async (t) => {
  const { port } = await serve(t, 'ml-kem-768');
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    let text = '';
    socket.on('data', (d: Buffer) => { text += d.toString(); });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'https_required');
  assert.match(body.error.message, /use an https:\/\/ URL/);
});

test('a client that never sends its ClientHello is cut off after the hello timeout', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-groups-'));
  const transport = new TransportSecurity(parsePqcTransport('ml-kem-768')!, { dataDir, hosts: [] });
  const server = createHttpsServer(transport.tlsOptions(), (_request, response) => response.end());
  trackNegotiatedGroups(server, { groups: transport.pqc.groups, helloTimeoutMs: 200, envelope: (e) => ({ error: e.message }) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });
  const closed = await new Promise<boolean>((resolve) => {
    const socket = netConnect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(Buffer.from([0x16, 0x03, 0x01])));
    socket.on('error', () => {});
    socket.on('close', () => resolve(true));
    setTimeout(() => resolve(false), 5_000).unref();
  });
  assert.ok(closed, 'the half-sent hello was cut off');
});

test('a ClientHello split over two TLS records still gets its handshake (its group unknown)', async (t) => {
  const { port, transport } = await serve(t, 'ml-kem-768');
  // A proxy that re-frames the client's first record as two records, as TLS allows.
  const { createServer: createTcpServer } = await import('node:net');
  const proxy = createTcpServer((client) => {
    const upstream = netConnect(port, '127.0.0.1');
    let first = true;
    let held = Buffer.alloc(0);
    client.on('data', (data: Buffer) => {
      if (!first) { upstream.write(data); return; }
      held = Buffer.concat([held, data]);
      if (held.length < 5 || held.length < 5 + held.readUInt16BE(3)) return;
      first = false;
      const length = held.readUInt16BE(3);
      const body = held.subarray(5, 5 + length);
      const half = Math.floor(body.length / 2);
      const record = (part: Buffer): Buffer => Buffer.concat([Buffer.from([0x16, held[1]!, held[2]!, part.length >> 8, part.length & 0xff]), part]);
      upstream.write(Buffer.concat([record(body.subarray(0, half)), record(body.subarray(half)), held.subarray(5 + length)]));
    });
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => proxy.close(resolve)));
  const { clientGroup, health } = await exchange((proxy.address() as AddressInfo).port, transport.identity.certificatePem, undefined);
  assert.equal(clientGroup, 'X25519MLKEM768');
  assert.equal(health.tls, 'TLSv1.3');
  assert.equal(health.cipher.group, null, 'not derived from a hello the reader could not parse: unknown, never guessed');
});

test('closing the server cuts connections still before the end of their handshake (shutdown does not wait on them)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-groups-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const transport = new TransportSecurity(parsePqcTransport('ml-kem-768')!, { dataDir, hosts: [] });
  // Hour-long hello timeout: only the close can end these connections within the test's time.
  const server = createHttpsServer({ ...transport.tlsOptions(), handshakeTimeout: 3_600_000 }, (_request, response) => response.end());
  trackNegotiatedGroups(server, { groups: transport.pqc.groups, helloTimeoutMs: 3_600_000, envelope: (e) => ({ error: e.message }) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const silent = netConnect(port, '127.0.0.1');
  silent.on('error', () => {});
  // A complete ClientHello, and then nothing: the client side never sees the server's answer.
  const raw = netConnect(port, '127.0.0.1');
  raw.on('error', () => {});
  raw.on('data', () => {});
  const { Duplex } = await import('node:stream');
  const mute = new Duplex({ write(chunk: Buffer, _encoding, done) { raw.write(chunk); done(); }, read() {} });
  const client = connect({ socket: mute, ca: transport.identity.certificatePem, servername: 'localhost' });
  client.on('error', () => {});
  await Promise.all([new Promise((resolve) => silent.once('connect', resolve)), new Promise((resolve) => raw.once('connect', resolve))]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // Resolves only once every connection is gone: without the cut, in an hour.
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await closed;
  client.destroy();
});
