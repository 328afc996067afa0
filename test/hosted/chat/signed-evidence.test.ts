import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { verify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { SVC_ROUTE_FIELDS, SVC_ROUTE_SIGNATURE_FIELDS } from '../../../src/hosted/descriptors.ts';
import { verifyEvidence } from '../../../src/transport/evidence-signature.ts';
import { parsePqcTransport } from '../../../src/transport/pqc-transport-options.ts';
import { TransportSecurity } from '../../../src/transport/transport-security.ts';
import { runCliToEnd } from '../../helpers/daemon-process.ts';
import { buildChatFixture } from '../../helpers/hosted-chat-fixture.ts';
import { postgresUnavailable } from '../../helpers/test-services.ts';

const BODY = { model: 'svc-chat-small', messages: [{ role: 'user', content: 'Say hello' }] };

function transportIn(t: TestContext, list: string): { transport: TransportSecurity; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-evidence-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { transport: new TransportSecurity(parsePqcTransport(list)!, { dataDir: dir, hosts: ['127.0.0.1'] }), dir };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  test(`[${kind}] every svc_route is signed with the ML-DSA identity, in the answer, the stream and GET /evidence/:id; a changed field fails`, { skip: kind === 'postgres' ? await postgresUnavailable('the [postgres] signed-evidence test') : false }, async (t) => {
    const { transport } = transportIn(t, 'ml-kem-768,ml-dsa-65');
    const f = await buildChatFixture(t, { kind, transport });
    const a = await f.account();
    const auth = { authorization: `Bearer ${a.secret}` };
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth, payload: BODY });
    assert.equal(res.statusCode, 200, res.body);
    const route = res.json<{ svc_route: Record<string, unknown> }>().svc_route;
    assert.deepEqual(Object.keys(route).sort(), [...SVC_ROUTE_FIELDS, ...SVC_ROUTE_SIGNATURE_FIELDS].map((x) => x.name).sort());
    assert.equal(route.signature_alg, 'ml-dsa-65');
    assert.equal(route.signing_key_id, transport.identity.keyId);
    assert.deepEqual(verifyEvidence(route, transport.identity.publicKey), { valid: true, keyId: transport.identity.keyId, algorithm: 'ml-dsa-65' });
    for (const change of [{ billable_joules: 0 }, { fallback: true }, { evidence_id: 'ev_other' }, { signing_key_id: 'x' }]) {
      assert.equal(verifyEvidence({ ...route, ...change }, transport.identity.publicKey).valid, false, JSON.stringify(change));
    }
    // Checked once without svc's verifier: RFC 8785 JSON of the record less its signature, ML-DSA with the documented context.
    const { signature, ...signed } = route;
    assert.ok(verify(null, Buffer.from(canonicalize(signed)!), { key: transport.identity.publicKey, context: Buffer.from('svc_route/v1') }, Buffer.from(String(signature), 'base64url')));
    // Fields in another order are the same record (RFC 8785): what is signed is the content.
    assert.equal(verifyEvidence(Object.fromEntries(Object.entries(route).reverse()), transport.identity.publicKey).valid, true);

    const stored = await f.app.inject({ method: 'GET', url: `/api/v1/evidence/${String(route.evidence_id)}`, headers: auth });
    assert.equal(stored.statusCode, 200, stored.body);
    const storedRoute = stored.json<{ svc_route: Record<string, unknown> }>().svc_route;
    assert.deepEqual(storedRoute, route, 'the ledger keeps the record exactly as signed');
    assert.equal(verifyEvidence(storedRoute, transport.identity.publicKey).valid, true);

    const streamed = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: auth, payload: { ...BODY, stream: true } });
    const last = streamed.body.split('\n\n').filter((b) => b.startsWith('data: {')).map((b) => JSON.parse(b.slice(6)) as { svc_route?: Record<string, unknown> }).at(-1);
    assert.ok(last?.svc_route);
    assert.equal(verifyEvidence(last.svc_route, transport.identity.publicKey).valid, true);
  });
}

test('without ML-DSA (ml-kem-768 alone) evidence is unsigned, as without --pqc-transport', async (t) => {
  const { transport } = transportIn(t, 'ml-kem-768');
  const f = await buildChatFixture(t, { transport });
  const a = await f.account();
  const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${a.secret}` }, payload: BODY });
  assert.deepEqual(Object.keys(res.json<{ svc_route: object }>().svc_route).sort(), SVC_ROUTE_FIELDS.map((x) => x.name).sort());
});

test('svc evidence verify: offline, with the certificate, the PEM key or the identity document; exit 1 on a changed or foreign record, 2 on bad input', async (t) => {
  const { transport, dir } = transportIn(t, 'ml-kem-768,ml-dsa-65');
  const other = transportIn(t, 'ml-dsa-65').transport;
  const f = await buildChatFixture(t, { transport });
  const a = await f.account();
  const res = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${a.secret}` }, payload: BODY });
  const completion = res.json<{ svc_route: Record<string, unknown> }>();
  const files = {
    completion: join(dir, 'completion.json'),
    tampered: join(dir, 'tampered.json'),
    pem: join(dir, 'key.pem'),
    identity: join(dir, 'identity.json'),
    foreign: join(dir, 'foreign.pem'),
    garbage: join(dir, 'garbage.json'),
  };
  writeFileSync(files.completion, JSON.stringify(completion));
  writeFileSync(files.tampered, JSON.stringify([completion.svc_route, { ...completion.svc_route, billable_joules: 0.001 }]));
  writeFileSync(files.pem, transport.identity.publicKeyPem);
  writeFileSync(files.identity, JSON.stringify({ public_key: transport.identity.publicKeyPem }));
  writeFileSync(files.foreign, other.identity.publicKeyPem);
  writeFileSync(files.garbage, '{"no": "records"}');
  const stream = await f.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${a.secret}` }, payload: { ...BODY, stream: true } });
  const sseFile = join(dir, 'stream.txt');
  writeFileSync(sseFile, stream.body);

  for (const key of [transport.identity.certificatePath, files.pem, files.identity]) {
    const run = await runCliToEnd(['evidence', 'verify', files.completion, '--public-key', key]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `valid    ${String(completion.svc_route.evidence_id)}: signed by ml-dsa-65 key ${transport.identity.keyId}\n`);
  }
  const fromStream = await runCliToEnd(['evidence', 'verify', sseFile, '--public-key', files.pem]);
  assert.equal(fromStream.code, 0, fromStream.stderr);
  assert.match(fromStream.stdout, /^valid    ev_\w+: signed by ml-dsa-65 key /);
  const tampered = await runCliToEnd(['evidence', 'verify', files.tampered, '--public-key', files.pem, '--json']);
  assert.equal(tampered.code, 1);
  const lines = tampered.stdout.trim().split('\n').map((l) => JSON.parse(l) as { valid: boolean; reason?: string });
  assert.deepEqual(lines.map((l) => l.valid), [true, false]);
  assert.match(lines[1]!.reason!, /changed after signing/);
  const foreign = await runCliToEnd(['evidence', 'verify', files.completion, '--public-key', files.foreign]);
  assert.equal(foreign.code, 1);
  assert.match(foreign.stdout, /INVALID .*signed by key .*, not by this public key/);
  const garbage = await runCliToEnd(['evidence', 'verify', files.garbage, '--public-key', files.pem]);
  assert.equal(garbage.code, 2);
  assert.match(garbage.stderr, /no svc_route record in it/);
});

test('svc hosted over PQC TLS: /api/v1/health reports the connection\'s group, and the page refuses plain HTTP', async (t) => {
  const { transport } = transportIn(t, 'ml-kem-768,ml-dsa-65');
  const f = await buildChatFixture(t, { transport });
  // Fastify names the scheme from its own https option; the server the factory made speaks TLS.
  const address = (await f.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http:/, 'https:');
  const health = await new Promise<Record<string, unknown>>((resolve, reject) => {
    httpsRequest(`${address}/api/v1/health`, { ca: transport.identity.certificatePem, agent: false, ecdhCurve: 'MLKEM768' }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
    }).on('error', reject).end();
  });
  assert.equal(health.tls, 'TLSv1.3');
  assert.deepEqual(health.cipher, { suite: 'TLS_AES_256_GCM_SHA384', group: 'MLKEM768', certificate: 'ml-dsa-65' });
  assert.deepEqual(health.pqc_transport, ['ml-kem-768', 'ml-dsa-65']);
  const plain = await fetch(address.replace('https:', 'http:') + '/api/v1/health').then((r) => r.json()) as { error: { code: string } };
  assert.equal(plain.error.code, 'https_required');
});
