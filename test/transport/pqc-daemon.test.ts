import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { after, before, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { runCliToEnd, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess & { dataDir: string };
let ca: string;
let publicKey: KeyObject;
let keyId: string;

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string; peerKeyType: string | undefined }

/** One request with Node's own https client, trusting only the daemon's certificate. */
function call(method: string, path: string, body?: unknown, extra: { ecdhCurve?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(path, daemon.url);
  const { headers, ...tls } = extra;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method, ca, agent: false, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, ...tls }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerX509Certificate();
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, peerKeyType: peer?.publicKey.asymmetricKeyType }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * Verifies an RFC 9421 response signature the way a client without svc's code would: the
 * signature base is built here by hand from the response and the request, and checked with
 * node:crypto's ML-DSA.
 */
function verifyResponseSignature(answer: Answer, method: string, target: string): { ok: boolean; covered: string[]; params: string } {
  const input = String(answer.headers['signature-input']);
  const signature = String(answer.headers['signature']);
  const m = /^svc=(\((.*)\)(;created=\d+;keyid="([^"]+)";alg="ml-dsa-65"(?:;nonce="[^"]*")?))$/.exec(input);
  assert.ok(m, `Signature-Input: ${input}`);
  assert.equal(m[4], keyId);
  const covered = [...m[2]!.matchAll(/"([^"]+)"(;req)?/g)].map((c) => `"${c[1]}"${c[2] ?? ''}`);
  const url = new URL(target, 'https://localhost');
  const value = (component: string): string => {
    switch (component) {
      case '"@status"': return String(answer.status);
      case '"@method";req': return method;
      case '"@path";req': return url.pathname;
      case '"@query";req': return url.search === '' ? '?' : url.search;
      default: return String(answer.headers[component.slice(1, -1)]);
    }
  };
  const base = [...covered.map((c) => `${c}: ${value(c)}`), `"@signature-params": ${m[1]}`].join('\n');
  const raw = /^svc=:([A-Za-z0-9+/=]+):$/.exec(signature);
  assert.ok(raw, `Signature: ${signature.slice(0, 40)}`);
  return { ok: verify(null, Buffer.from(base), publicKey, Buffer.from(raw[1]!, 'base64')), covered, params: m[3]! };
}

before(async () => {
  daemon = await startDaemon({ args: ['--pqc-transport', 'ml-kem-768,ml-dsa-65', '--host', '127.0.0.1'] });
  ca = readFileSync(`${daemon.dataDir}/transport/identity-ml-dsa-65.crt`, 'utf8');
});

after(async () => {
  await daemon?.stop();
});

test('svc serve --pqc-transport: https only, the identity published, the certificate an ML-DSA-65 one', async () => {
  assert.match(daemon.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const identity = await call('GET', '/transport/identity');
  assert.equal(identity.status, 200);
  assert.equal(identity.peerKeyType, 'ml-dsa-65', 'the TLS certificate carries the ML-DSA key');
  const doc = JSON.parse(identity.body) as { algorithm: string; key_id: string; public_key: string; certificate: string; signs: string[] };
  assert.equal(doc.algorithm, 'ml-dsa-65');
  assert.deepEqual(doc.signs, ['responses', 'svc_route']);
  publicKey = createPublicKey(doc.public_key);
  keyId = doc.key_id;
  assert.equal(createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64url'), keyId);
  assert.equal(doc.certificate, ca);
  const line = daemon.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('HTTPS only'));
  assert.ok(line, 'the start-up log says what the transport is');
});

test('health reports pqc_transport, tls and cipher from each connection: the hybrid group for one client, pure ML-KEM for another', async () => {
  for (const [curve, group] of [[undefined, 'X25519MLKEM768'], ['MLKEM768', 'MLKEM768']] as const) {
    const answer = await call('GET', '/health', undefined, curve === undefined ? {} : { ecdhCurve: curve });
    const health = JSON.parse(answer.body) as Record<string, unknown>;
    assert.deepEqual(health.pqc_transport, ['ml-kem-768', 'ml-dsa-65']);
    assert.equal(health.tls, 'TLSv1.3');
    assert.deepEqual(health.cipher, { suite: 'TLS_AES_256_GCM_SHA384', group, certificate: 'ml-dsa-65' });
    assert.deepEqual(health.transport_identity, { algorithm: 'ml-dsa-65', key_id: keyId, url: '/transport/identity' });
  }
});

test('responses are signed (RFC 9421, ML-DSA-65): the signature verifies with node:crypto, and a changed body or status does not', async () => {
  const health = await call('GET', '/health');
  assert.equal(health.headers['content-digest'], `sha-256=:${createHash('sha256').update(health.body).digest('base64')}:`);
  const { ok, covered } = verifyResponseSignature(health, 'GET', '/health');
  assert.ok(ok);
  assert.deepEqual(covered, ['"@status"', '"content-digest"', '"@method";req', '"@path";req', '"@query";req', '"content-type"']);
  assert.equal(verifyResponseSignature({ ...health, status: 500 }, 'GET', '/health').ok, false);
  assert.equal(verifyResponseSignature({ ...health, headers: { ...health.headers, 'content-digest': 'sha-256=:AAAA:' } }, 'GET', '/health').ok, false);
  assert.equal(verifyResponseSignature(health, 'GET', '/v1/models').ok, false, 'bound to the request it answers');

  // Other answers are signed when the client asks (RFC 9421 Accept-Signature), errors included.
  const unasked = await call('GET', '/v1/models');
  assert.equal(unasked.headers['signature'], undefined);
  const asked = await call('GET', '/v1/models', undefined, { headers: { 'accept-signature': 'svc=("@status" "content-digest")' } });
  assert.ok(verifyResponseSignature(asked, 'GET', '/v1/models').ok);
  const missing = await call('POST', '/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'accept-signature': 'svc=()' } });
  assert.equal(missing.status, 404);
  assert.ok(verifyResponseSignature(missing, 'POST', '/v1/chat/completions').ok);
  // The query is covered, and a nonce the client sends comes back inside the signature.
  const fresh = await call('GET', '/v1/models?limit=1', undefined, { headers: { 'accept-signature': 'svc=();nonce="n-4711"' } });
  const checked = verifyResponseSignature(fresh, 'GET', '/v1/models?limit=1');
  assert.ok(checked.ok);
  assert.match(checked.params, /;nonce="n-4711"$/);
  assert.equal(verifyResponseSignature(fresh, 'GET', '/v1/models?limit=2').ok, false);
  // HEAD carries no content to digest: unsigned.
  const head = await call('HEAD', '/health');
  assert.equal(head.headers['signature'], undefined);
});

test('the official openai client talks to it over PQC TLS: a signed chat answer, and a stream', async () => {
  const dispatcher = new Agent({ connect: { ca } });
  const client = new OpenAI({
    baseURL: `${daemon.url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: { 'accept-signature': 'svc=()' },
    fetch: undiciFetch as unknown as typeof fetch, fetchOptions: { dispatcher } as never,
  });
  const { data, response } = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 }).withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.ok(response.headers.get('signature')?.startsWith('svc=:'));
  const stream = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4, stream: true });
  let chunks = 0;
  for await (const _chunk of stream) chunks++;
  assert.ok(chunks > 1);
  await dispatcher.close();
});

test('MCP over PQC TLS: the SDK client connects, and a tool that calls the daemon back over its own HTTPS listener works', async () => {
  const dispatcher = new Agent({ connect: { ca } });
  const client = new Client({ name: 'svc-pqc-test', version: '1.0.0' });
  const fetchOverTls = ((url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { fetch: fetchOverTls }));
  const result = await client.callTool({ name: 'svc_list_models', arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.match(JSON.stringify(result.content), /tiny/);
  await client.close();
  await dispatcher.close();
});

test('svc\'s own CLI: trusts the daemon through NODE_EXTRA_CA_CERTS, and without it says why it cannot connect', async () => {
  const trusted = await runCliToEnd(['models', 'list', '--url', daemon.url], { NODE_EXTRA_CA_CERTS: `${daemon.dataDir}/transport/identity-ml-dsa-65.crt` });
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.match(trusted.stdout, /^tiny /m);
  const untrusted = await runCliToEnd(['models', 'list', '--url', daemon.url]);
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /serves HTTPS with a certificate this client does not trust \(DEPTH_ZERO_SELF_SIGNED_CERT\); point NODE_EXTRA_CA_CERTS/);
});

test('ml-kem-1024 alone: a default client is refused, one offering ML-KEM-1024 gets in, and the MCP tools still reach the daemon', async () => {
  const strict = await startDaemon({ args: ['--pqc-transport', 'ml-kem-1024', '--host', '127.0.0.1'] });
  try {
    const strictCa = readFileSync(`${strict.dataDir}/transport/identity-ecdsa-p256.crt`, 'utf8');
    const refused = await undiciFetch(`${strict.url}/health`, { dispatcher: new Agent({ connect: { ca: strictCa } }) }).then(() => 'connected', (error: { cause?: { code?: string } }) => error.cause?.code);
    assert.equal(refused, 'ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE');
    const dispatcher = new Agent({ connect: { ca: strictCa, ecdhCurve: 'MLKEM1024' } });
    const health = await undiciFetch(`${strict.url}/health`, { dispatcher }).then((r) => r.json()) as { cipher: { group: string } };
    assert.equal(health.cipher.group, 'MLKEM1024');
    const client = new Client({ name: 'svc-pqc-test', version: '1.0.0' });
    const fetchOverTls = ((url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
    await client.connect(new StreamableHTTPClientTransport(new URL(`${strict.url}/mcp`), { fetch: fetchOverTls }));
    const result = await client.callTool({ name: 'svc_list_models', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    await client.close();
    await dispatcher.close();
  } finally {
    await strict.stop();
  }
});

test('unsupported and later algorithms stop the start with exit 2, naming what is supported', async () => {
  const run = await runCliToEnd(['serve', '--port', '0', '--discover', 'none', '--pqc-transport', 'ml-kem-768,slh-dsa-sha2-128s']);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--pqc-transport slh-dsa-sha2-128s: not supported in this version \(SLH-DSA is a v1\.1 transport feature\)\. Supported: ml-kem-768, ml-kem-1024, ml-dsa-44, ml-dsa-65, ml-dsa-87\./);
});
