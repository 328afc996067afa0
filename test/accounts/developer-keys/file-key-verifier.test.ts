import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DeveloperKeyFile, ExportedKey } from '../../../src/accounts/developer-keys/developer-key-file.ts';
import { DeveloperKeyFileError, FileKeyVerifier } from '../../../src/accounts/developer-keys/file-key-verifier.ts';
import { hashSecret, newKeySecret } from '../../../src/accounts/store/store-secrets.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-devkeys-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function key(secret: string, extra: Partial<ExportedKey> = {}): ExportedKey {
  n += 1;
  return {
    id: `key_${n}`, account_id: 'acct_1', scope: 'developer_runtime', project: null, name: null,
    secret_sha256: hashSecret(secret), revoked_at: null, ...extra,
  };
}

function file(keys: ExportedKey[]): DeveloperKeyFile {
  return { format: 'svc-developer-keys', version: 1, exported_at: new Date().toISOString(), keys };
}

function writeKeys(path: string, keys: ExportedKey[]): void {
  writeFileSync(path, JSON.stringify(file(keys)));
}

describe('FileKeyVerifier', () => {
  const live = newKeySecret('developer_runtime');
  const paid = newKeySecret('supercomputer');
  const revoked = newKeySecret('developer_runtime');
  const path = join(dir, 'keys.json');
  writeKeys(path, [
    key(live, { id: 'key_live', account_id: 'acct_a', project: 'proj-x' }),
    key(paid, { id: 'key_paid', scope: 'supercomputer' }),
    key(revoked, { id: 'key_gone', revoked_at: '2026-01-02T03:04:05.000Z' }),
  ]);

  it('says valid with the key\'s identity, revoked, or unknown', async () => {
    const verifier = new FileKeyVerifier(path);
    assert.equal(verifier.source, 'file');
    assert.equal(verifier.keyCount(), 2);
    assert.deepEqual(await verifier.verify(live), { status: 'valid', keyId: 'key_live', accountId: 'acct_a', project: 'proj-x', scope: 'developer_runtime' });
    assert.equal((await verifier.verify(paid)).status, 'valid');
    assert.deepEqual(await verifier.verify(revoked), { status: 'revoked' });
    assert.deepEqual(await verifier.verify(newKeySecret('developer_runtime')), { status: 'unknown' });
  });

  it('treats malformed and hostile input as unknown, never throwing', async () => {
    const verifier = new FileKeyVerifier(path);
    // The stored hash itself, the secret with one character changed, and odd shapes.
    const oneOff = `${live.slice(0, -1)}${live.endsWith('A') ? 'B' : 'A'}`;
    for (const input of [hashSecret(live), oneOff, '', 'none', 'svc_dk_', '__proto__', 'constructor', live.repeat(50), `${live} `, 42 as unknown as string]) {
      assert.deepEqual(await verifier.verify(input), { status: 'unknown' }, JSON.stringify(input));
    }
  });

  it('keeps the constant-time compare on the path: an entry whose hash is not the presented one never matches', async () => {
    // Index the file, then tamper with the in-memory entry (as a hash collision in the Map
    // would look): the final sameHash check still refuses it.
    const path2 = join(dir, 'ct.json');
    const secret = newKeySecret('developer_runtime');
    writeKeys(path2, [key(secret, { id: 'key_ct' })]);
    const verifier = new FileKeyVerifier(path2);
    assert.equal((await verifier.verify(secret)).status, 'valid');
    const originalGet = Map.prototype.get;
    Map.prototype.get = function patched(this: Map<unknown, unknown>, k: unknown) {
      const value = originalGet.call(this, k) as ExportedKey | undefined;
      return value === undefined ? value : { ...value, secret_sha256: '0'.repeat(64) };
    };
    try {
      assert.deepEqual(await verifier.verify(secret), { status: 'unknown' });
    } finally {
      Map.prototype.get = originalGet;
    }
  });

  it('reloads a changed file on use (at most once per interval)', async () => {
    const path3 = join(dir, 'reload.json');
    const first = newKeySecret('developer_runtime');
    const second = newKeySecret('developer_runtime');
    writeKeys(path3, [key(first, { id: 'key_first' })]);
    let now = 0;
    const verifier = new FileKeyVerifier(path3, { checkIntervalMs: 1000, clock: () => now });
    assert.equal((await verifier.verify(second)).status, 'unknown');
    writeKeys(path3, [key(first, { id: 'key_first', revoked_at: new Date().toISOString() }), key(second, { id: 'key_second' })]);
    now = 500;
    assert.equal((await verifier.verify(second)).status, 'unknown', 'not looked at again within the interval');
    now = 1001;
    assert.equal((await verifier.verify(second)).status, 'valid');
    assert.equal((await verifier.verify(first)).status, 'revoked');
    assert.equal(verifier.keyCount(), 1);
  });

  it('keeps the last good set when a reload fails, warns once, and recovers', async () => {
    const path4 = join(dir, 'broken.json');
    const secret = newKeySecret('developer_runtime');
    const later = newKeySecret('developer_runtime');
    writeKeys(path4, [key(secret, { id: 'key_kept' })]);
    const warnings: string[] = [];
    const verifier = new FileKeyVerifier(path4, { checkIntervalMs: 0, onWarning: (m) => warnings.push(m) });
    writeFileSync(path4, '{"format":"svc-developer-keys","version":1,"keys":[');
    assert.equal((await verifier.verify(secret)).status, 'valid');
    writeFileSync(path4, JSON.stringify({ ...file([]), version: 2 }));
    assert.equal((await verifier.verify(secret)).status, 'valid');
    unlinkSync(path4);
    assert.equal((await verifier.verify(secret)).status, 'valid');
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0] ?? '', /reload failed \(not JSON.*keeping the 1 keys/);
    assert.equal(warnings[0]?.includes(secret), false);
    writeKeys(path4, [key(later, { id: 'key_later' })]);
    assert.equal((await verifier.verify(later)).status, 'valid');
    assert.equal((await verifier.verify(secret)).status, 'unknown');
    writeFileSync(path4, 'garbage');
    await verifier.verify(later);
    assert.equal(warnings.length, 2, 'a new broken spell after a good load warns again');
  });

  it('refuses a missing or invalid file at start with the reason', () => {
    assert.throws(() => new FileKeyVerifier(join(dir, 'nope.json')), (e: Error) => e instanceof DeveloperKeyFileError && /no such file/.test(e.message));
    const bad = join(dir, 'bad.json');
    for (const [content, reason] of [
      ['[]', /not a svc developer-key file/],
      [JSON.stringify({ ...file([]), format: 'other' }), /format/],
      [JSON.stringify(file([{ ...key(live), secret_sha256: live }])), /keys\.0\.secret_sha256/],
      [JSON.stringify(file([{ ...key(live), secret: live } as ExportedKey])), /Unrecognized key/],
      [JSON.stringify(file([key(live, { id: 'dup' }), key(paid, { id: 'dup' })])), /appears twice/],
    ] as const) {
      writeFileSync(bad, content);
      assert.throws(() => new FileKeyVerifier(bad), (e: Error) => e instanceof DeveloperKeyFileError && reason.test(e.message), content);
    }
  });
});
