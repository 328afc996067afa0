import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Plan } from '../../../src/accounts/plan.ts';
import { exportDeveloperKeys } from '../../../src/accounts/developer-keys/export-developer-keys.ts';
import { FileKeyVerifier } from '../../../src/accounts/developer-keys/file-key-verifier.ts';
import { openDeveloperKeyVerifier } from '../../../src/accounts/developer-keys/open-developer-key-verifier.ts';
import { StoreKeyVerifier } from '../../../src/accounts/developer-keys/store-key-verifier.ts';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { freshPostgresSchema, hostedStoreKinds, type HostedStoreFixture } from '../../helpers/hosted-stores.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from '../../helpers/test-services.ts';

const FREE: Plan = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };

for (const { kind, open, unavailable } of hostedStoreKinds) {
  describe(`StoreKeyVerifier and the export (${kind} store)`, { skip: await unavailable(`the StoreKeyVerifier tests on the ${kind} store`) }, () => {
    let fixture: HostedStoreFixture;
    before(async () => {
      fixture = await open();
    });
    after(async () => fixture.cleanup());

    it('verifies live keys with their identity, revoked keys as revoked, others as unknown; revocation is seen at once', async () => {
      const { store } = fixture;
      const account = await store.createAccount({ name: 'Dev', plan: FREE });
      const live = await store.issueKey(account.id, { scope: 'developer_runtime', project: 'proj-1' });
      const later = await store.issueKey(account.id, { scope: 'developer_runtime' });
      // A second instance on the same data, as the daemon opens it beside `svc hosted`.
      const verifier = new StoreKeyVerifier(await openHostedStore(fixture.options));
      try {
        assert.equal(await verifier.refreshCount(), 2);
        assert.equal(verifier.keyCount(), 2);
        assert.deepEqual(await verifier.verify(live.secret), { status: 'valid', keyId: live.key.id, accountId: account.id, project: 'proj-1', scope: 'developer_runtime' });
        assert.equal((await verifier.verify(later.secret)).status, 'valid');
        await store.revokeKey(account.id, later.key.id);
        assert.deepEqual(await verifier.verify(later.secret), { status: 'revoked' });
        assert.deepEqual(await verifier.verify(`${live.secret.slice(0, -2)}zz`), { status: 'unknown' });
        assert.deepEqual(await verifier.verify('none'), { status: 'unknown' });
      } finally {
        await verifier.close();
      }
    });

    it('exports hashes (never secrets) that a file verifier accepts the same way', async () => {
      const { store } = fixture;
      const mine = await store.createAccount({ name: 'Mine', plan: FREE });
      const theirs = await store.createAccount({ name: 'Theirs', plan: FREE });
      const a = await store.issueKey(mine.id, { scope: 'developer_runtime', name: 'laptop', project: 'p' });
      const b = await store.issueKey(mine.id, { scope: 'developer_runtime' });
      const c = await store.issueKey(theirs.id, { scope: 'developer_runtime' });
      await store.revokeKey(mine.id, b.key.id);
      const exported = await exportDeveloperKeys(store, mine.id, new Date('2026-11-01T00:00:00Z'));
      assert.equal(exported.format, 'svc-developer-keys');
      assert.equal(exported.version, 1);
      assert.equal(exported.exported_at, '2026-11-01T00:00:00.000Z');
      // Keys issued in the same millisecond are ordered by their (random) ids: look them up by id.
      assert.deepEqual(exported.keys.map((k) => k.id).sort(), [a.key.id, b.key.id].sort());
      assert.equal(exported.keys.find((k) => k.id === a.key.id)?.name, 'laptop');
      assert.equal(typeof exported.keys.find((k) => k.id === b.key.id)?.revoked_at, 'string');
      const text = JSON.stringify(exported);
      for (const secret of [a.secret, b.secret, c.secret]) assert.equal(text.includes(secret), false);

      const dir = mkdtempSync(join(tmpdir(), 'svc-devkeys-export-'));
      try {
        const path = join(dir, 'keys.json');
        writeFileSync(path, text);
        const verifier = new FileKeyVerifier(path);
        assert.equal((await verifier.verify(a.secret)).status, 'valid');
        assert.equal((await verifier.verify(b.secret)).status, 'revoked');
        assert.equal((await verifier.verify(c.secret)).status, 'unknown', 'another account\'s key is not in this account\'s export');
        const all = await exportDeveloperKeys(store);
        assert.ok(all.keys.some((k) => k.id === c.key.id));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses the keys of a disabled account, live and in a new export; enabling lets them through again', async () => {
      const { store } = fixture;
      const account = await store.createAccount({ name: 'Paused', plan: FREE });
      const other = await store.createAccount({ name: 'Running', plan: FREE });
      const issued = await store.issueKey(account.id, { scope: 'developer_runtime' });
      const kept = await store.issueKey(other.id, { scope: 'developer_runtime' });
      const verifier = new StoreKeyVerifier(await openHostedStore(fixture.options));
      try {
        await store.disableAccount(account.id);
        assert.equal((await verifier.verify(issued.secret)).status, 'unknown', 'not valid (and not revoked: it may work again)');
        for (const exported of [await exportDeveloperKeys(store, account.id), await exportDeveloperKeys(store)]) {
          assert.equal(exported.keys.some((k) => k.id === issued.key.id), false, 'a disabled account\'s key is left out of the export');
        }
        assert.ok((await exportDeveloperKeys(store)).keys.some((k) => k.id === kept.key.id));
        await store.enableAccount(account.id);
        assert.equal((await verifier.verify(issued.secret)).status, 'valid');
        assert.ok((await exportDeveloperKeys(store, account.id)).keys.some((k) => k.id === issued.key.id));
      } finally {
        await verifier.close();
      }
    });
  });
}

const NO_POSTGRES = await postgresUnavailable('the openDeveloperKeyVerifier test on a postgres URL');

describe('openDeveloperKeyVerifier', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-devkeys-open-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a svc hosted data dir as the store, and refuses a directory without one', async () => {
    const store = await openHostedStore({ dataDir: join(dir, 'hosted') });
    const account = await store.createAccount({ name: 'A', plan: FREE });
    const issued = await store.issueKey(account.id, { scope: 'developer_runtime' });
    await store.close();
    const verifier = await openDeveloperKeyVerifier(join(dir, 'hosted'));
    try {
      assert.equal(verifier.source, 'store');
      assert.equal(verifier.keyCount(), 1);
      assert.equal((await verifier.verify(issued.secret)).status, 'valid');
    } finally {
      await verifier.close();
    }
    await assert.rejects(openDeveloperKeyVerifier(dir), /a directory without a hosted store/);
    await assert.rejects(openDeveloperKeyVerifier(join(dir, 'missing')), /no such file or directory/);
  });

  it('opens a postgres URL as the store (its schema chosen in the URL)', { skip: NO_POSTGRES }, async () => {
    const { schema, drop } = freshPostgresSchema();
    try {
      const store = await openHostedStore({ dataDir: '', databaseUrl: TEST_DATABASE_URL, schema });
      const account = await store.createAccount({ name: 'PG', plan: FREE });
      const issued = await store.issueKey(account.id, { scope: 'developer_runtime', project: 'pg-proj' });
      await store.close();
      // libpq's `options` parameter, as an operator would scope the URL to the store's schema.
      const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const verifier = await openDeveloperKeyVerifier(url);
      try {
        assert.equal(verifier.source, 'store');
        assert.equal(verifier.keyCount(), 1);
        assert.deepEqual(await verifier.verify(issued.secret), { status: 'valid', keyId: issued.key.id, accountId: account.id, project: 'pg-proj', scope: 'developer_runtime' });
      } finally {
        await verifier.close();
      }
    } finally {
      await drop();
    }
    await assert.rejects(openDeveloperKeyVerifier('postgres://postgres@127.0.0.1:1/test'), /cannot open the PostgreSQL hosted store/);
  });
});
