import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { loadTransportIdentity, TransportIdentityError } from '../../src/transport/transport-identity.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-identity-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('identity: made on first start (key 0600, folder 0700), the same key on the next, a self-signed ML-DSA-65 certificate for the loopback names', (t) => {
  const dataDir = tempDir(t);
  const names = ['localhost', '127.0.0.1', '::1'];
  const first = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names });
  assert.equal(first.privateKey.asymmetricKeyType, 'ml-dsa-65');
  assert.equal(statSync(first.keyPath).mode & 0o777, 0o600);
  assert.equal(statSync(join(dataDir, 'transport')).mode & 0o777, 0o700);
  const certificate = new X509Certificate(first.certificatePem);
  assert.equal(certificate.publicKey.asymmetricKeyType, 'ml-dsa-65');
  assert.ok(certificate.verify(first.publicKey), 'self-signed with the identity key');
  assert.ok(certificate.checkHost('localhost'));
  assert.ok(certificate.checkIP('127.0.0.1'));
  assert.ok(certificate.checkIP('::1'));
  assert.equal(certificate.checkHost('example.com'), undefined);
  assert.match(first.keyId, /^[A-Za-z0-9_-]{43}$/);

  const again = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names });
  assert.equal(again.keyId, first.keyId);
  assert.equal(again.certificatePem, first.certificatePem, 'a fitting certificate is kept');

  // Another name: a new certificate, the same key (pinned public keys keep working).
  const wider = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: [...names, '127.0.0.2'] });
  assert.equal(wider.keyId, first.keyId);
  assert.notEqual(wider.certificatePem, first.certificatePem);
  assert.ok(new X509Certificate(wider.certificatePem).checkIP('127.0.0.2'));
  assert.equal(readFileSync(wider.certificatePath, 'utf8'), wider.certificatePem);
});

test('identity: without ML-DSA, an ECDSA P-256 key and certificate, kept apart from the ML-DSA one', (t) => {
  const dataDir = tempDir(t);
  const ec = loadTransportIdentity({ dataDir, algorithm: undefined, names: ['localhost'] });
  assert.equal(ec.algorithm, 'ecdsa-p256');
  assert.equal(ec.privateKey.asymmetricKeyType, 'ec');
  assert.ok(new X509Certificate(ec.certificatePem).verify(ec.publicKey));
  const ml = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-44', names: ['localhost'] });
  assert.notEqual(ml.keyPath, ec.keyPath);
  assert.equal(ml.privateKey.asymmetricKeyType, 'ml-dsa-44');
});

test('identity: a private key others can read, a key of another kind, or garbage is refused with what to do', (t) => {
  const dataDir = tempDir(t);
  const identity = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: ['localhost'] });
  chmodSync(identity.keyPath, 0o644);
  assert.throws(() => loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: ['localhost'] }), (error: unknown) => {
    assert.ok(error instanceof TransportIdentityError);
    assert.match(error.message, /readable by other users \(mode 644\); run chmod 600/);
    return true;
  });
  chmodSync(identity.keyPath, 0o600);
  const ecKey = readFileSync(loadTransportIdentity({ dataDir, algorithm: undefined, names: ['localhost'] }).keyPath);
  writeFileSync(identity.keyPath, ecKey, { mode: 0o600 });
  assert.throws(() => loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: ['localhost'] }), /holds an EC prime256v1 key, not ml-dsa-65; move it away/);
  writeFileSync(identity.keyPath, 'not a key', { mode: 0o600 });
  assert.throws(() => loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: ['localhost'] }), /not a private key this build can read/);
});

test('identity: an EC key on another curve is not the P-256 identity', async (t) => {
  const dataDir = tempDir(t);
  const ec = loadTransportIdentity({ dataDir, algorithm: undefined, names: ['localhost'] });
  const { generateKeyPairSync } = await import('node:crypto');
  writeFileSync(ec.keyPath, generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  assert.throws(() => loadTransportIdentity({ dataDir, algorithm: undefined, names: ['localhost'] }), /holds an EC secp384r1 key, not ecdsa-p256/);
});
