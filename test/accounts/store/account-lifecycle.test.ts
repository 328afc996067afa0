/**
 * The account lifecycle in the hosted store, on SQLite and PostgreSQL: disabling and enabling an
 * account, ending its sessions, and the per-plan cap on active keys (atomic across replicas).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { HostedStore } from '../../../src/accounts/hosted-store.ts';
import { DEFAULT_MAX_ACTIVE_KEYS, maxActiveKeysOf, type Plan } from '../../../src/accounts/plan.ts';
import { AccountDisabledError } from '../../../src/accounts/store/account-disabled-error.ts';
import { KeyLimitReachedError } from '../../../src/accounts/store/key-limit-reached-error.ts';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { hostedStoreKinds, type HostedStoreFixture } from '../../helpers/hosted-stores.ts';

const FREE: Plan = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };
const PAID: Plan = { monthlyJouleAllowance: 10_000, hostedEntitlement: true, enterprise: false };
const DAY_MS = 86_400_000;

async function signedIn(store: HostedStore, accountId: string): Promise<string> {
  const { token } = await store.createSignInToken(accountId, 60_000);
  const redeemed = await store.redeemSignInToken(token, DAY_MS);
  assert.ok(redeemed !== undefined);
  return redeemed.token;
}

for (const { kind, open, unavailable } of hostedStoreKinds) {
  describe(`account lifecycle (${kind})`, { skip: await unavailable(`the tests of account lifecycle (${kind})`) }, () => {
    let fixture: HostedStoreFixture;
    let store: HostedStore;

    before(async () => {
      fixture = await open();
      store = fixture.store;
    });
    after(async () => {
      await fixture.cleanup();
    });

    it('a disabled account: keys refused, sessions and unused links ended, no new links; enable restores keys only', async () => {
      const account = await store.createAccount({ name: 'to-disable', plan: PAID });
      const other = await store.createAccount({ name: 'bystander', plan: PAID });
      assert.equal(account.disabledAt, null);
      const { key, secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const otherKey = await store.issueKey(other.id, { scope: 'supercomputer' });
      const session = await signedIn(store, account.id);
      const otherSession = await signedIn(store, other.id);
      const pendingLink = await store.createSignInToken(account.id, 60_000);
      await fixture.raw('update api_keys set last_used_at = null where id = ?', [key.id]);

      const disabled = await store.disableAccount(account.id);
      assert.ok(disabled?.disabledAt instanceof Date);
      const check = await store.checkKey(secret);
      assert.equal(check.status, 'account_disabled');
      assert.equal(check.status === 'account_disabled' ? check.key.id : '', key.id);
      assert.equal(await store.checkSession(session), undefined, 'its session is ended');
      assert.equal(await store.redeemSignInToken(pendingLink.token, DAY_MS), undefined, 'its unused link is void');
      await assert.rejects(store.createSignInToken(account.id, 60_000), AccountDisabledError);
      assert.equal((await fixture.raw('select count(*) as n from sessions where account_id = ?', [account.id]))[0]!.n, kind === 'postgres' ? '0' : 0);
      const [row] = await fixture.raw('select last_used_at from api_keys where id = ?', [key.id]);
      assert.equal(row!.last_used_at, null, 'a refused key is not counted as used');
      assert.equal((await store.getAccount(account.id))?.disabledAt?.getTime(), disabled.disabledAt.getTime());

      // Nothing of another account moves.
      assert.equal((await store.checkKey(otherKey.secret)).status, 'valid');
      assert.ok((await store.checkSession(otherSession)) !== undefined);

      // Disabling again keeps the first time; an unknown account is undefined.
      const again = await store.disableAccount(account.id);
      assert.equal(again?.disabledAt?.getTime(), disabled.disabledAt.getTime());
      assert.equal(await store.disableAccount('acct_nope'), undefined);
      assert.equal(await store.enableAccount('acct_nope'), undefined);

      const enabled = await store.enableAccount(account.id);
      assert.equal(enabled?.disabledAt, null);
      assert.equal((await store.checkKey(secret)).status, 'valid', 'keys work again');
      assert.equal(await store.checkSession(session), undefined, 'ended sessions stay ended');
      assert.ok((await store.checkSession(await signedIn(store, account.id))) !== undefined, 'and signing in works again');
    });

    it('a session or link made in a race with disabling is still refused while the account is disabled', async () => {
      const account = await store.createAccount({ name: 'race', plan: FREE });
      const { token } = await store.createSignInToken(account.id, 60_000);
      const session = await signedIn(store, account.id);
      // What disabling would have deleted, put back past the interface: the checks refuse it anyway.
      const [link] = await fixture.raw('select * from sign_in_tokens where account_id = ? and used_at is null', [account.id]);
      const [sess] = await fixture.raw('select * from sessions where account_id = ?', [account.id]);
      await store.disableAccount(account.id);
      await fixture.raw('insert into sign_in_tokens (token_hash, account_id, created_at, expires_at, used_at) values (?, ?, ?, ?, null)', [link!.token_hash, account.id, link!.created_at, link!.expires_at]);
      await fixture.raw('insert into sessions (id, token_hash, account_id, created_at, expires_at) values (?, ?, ?, ?, ?)', [sess!.id, sess!.token_hash, account.id, sess!.created_at, sess!.expires_at]);
      assert.equal(await store.checkSession(session), undefined);
      assert.equal(await store.redeemSignInToken(token, DAY_MS), undefined);
      await store.enableAccount(account.id);
      assert.ok((await store.checkSession(session)) !== undefined, 'the same rows pass once enabled: the account was what refused them');
    });

    it('revokeSessions ends every session of one account and voids its unused links', async () => {
      const account = await store.createAccount({ name: 'sessions', plan: FREE });
      const other = await store.createAccount({ name: 'other', plan: FREE });
      const sessions = [await signedIn(store, account.id), await signedIn(store, account.id)];
      const link = await store.createSignInToken(account.id, 60_000);
      const otherSession = await signedIn(store, other.id);
      const otherLink = await store.createSignInToken(other.id, 60_000);
      const { secret } = await store.issueKey(account.id, { scope: 'developer_runtime' });

      assert.deepEqual(await store.revokeSessions(account.id), { sessions: 2, signInLinks: 1 });
      for (const token of sessions) assert.equal(await store.checkSession(token), undefined);
      assert.equal(await store.redeemSignInToken(link.token, DAY_MS), undefined);
      assert.ok((await store.checkSession(otherSession)) !== undefined);
      assert.ok((await store.redeemSignInToken(otherLink.token, DAY_MS)) !== undefined);
      assert.equal((await store.checkKey(secret)).status, 'valid', 'keys are not sessions: they stay');
      assert.ok((await store.checkSession(await signedIn(store, account.id))) !== undefined, 'the account can sign in again');
      assert.deepEqual(await store.revokeSessions('acct_nope'), { sessions: 0, signInLinks: 0 });
    });

    it('plans cap active keys: defaults by plan, set and reset with setPlan', async () => {
      const free = await store.createAccount({ name: 'free', plan: FREE });
      const paid = await store.createAccount({ name: 'paid', plan: PAID });
      const enterprise = await store.createAccount({ name: 'ent', plan: { ...PAID, enterprise: true } });
      assert.equal(maxActiveKeysOf(free.plan), DEFAULT_MAX_ACTIVE_KEYS.free);
      assert.equal(maxActiveKeysOf(paid.plan), DEFAULT_MAX_ACTIVE_KEYS.entitled);
      assert.equal(maxActiveKeysOf(enterprise.plan), DEFAULT_MAX_ACTIVE_KEYS.enterprise);
      assert.ok(DEFAULT_MAX_ACTIVE_KEYS.free < DEFAULT_MAX_ACTIVE_KEYS.entitled && DEFAULT_MAX_ACTIVE_KEYS.entitled < DEFAULT_MAX_ACTIVE_KEYS.enterprise);

      for (let i = 0; i < DEFAULT_MAX_ACTIVE_KEYS.free; i++) await store.issueKeyWithinCap(free.id, { scope: 'developer_runtime' });
      await assert.rejects(store.issueKeyWithinCap(free.id, { scope: 'developer_runtime' }), (error: unknown) => error instanceof KeyLimitReachedError && error.maxActiveKeys === DEFAULT_MAX_ACTIVE_KEYS.free);

      const capped = await store.setPlan(free.id, { maxActiveKeys: 12 });
      assert.equal(capped?.plan.maxActiveKeys, 12);
      assert.equal((await store.getAccount(free.id))?.plan.maxActiveKeys, 12);
      await store.issueKeyWithinCap(free.id, { scope: 'developer_runtime' });
      await store.issueKeyWithinCap(free.id, { scope: 'developer_runtime' });
      await assert.rejects(store.issueKeyWithinCap(free.id, { scope: 'developer_runtime' }), KeyLimitReachedError);

      // Revoked keys do not count.
      const [first] = await store.listKeys(free.id);
      await store.revokeKey(free.id, first!.id);
      const issued = await store.issueKeyWithinCap(free.id, { scope: 'developer_runtime', name: 'n', project: 'p' });
      assert.deepEqual([issued.key.name, issued.key.project, issued.key.revokedAt], ['n', 'p', null]);
      assert.equal((await store.checkKey(issued.secret)).status, 'valid');
      assert.equal((await store.listKeys(free.id)).filter((k) => k.revokedAt === null).length, 12);

      const reset = await store.setPlan(free.id, { maxActiveKeys: null });
      assert.equal(reset?.plan.maxActiveKeys, undefined, 'back on the default');
      await assert.rejects(store.setPlan(free.id, { maxActiveKeys: -1 }), RangeError);
      await assert.rejects(store.setPlan(free.id, { maxActiveKeys: 1.5 }), RangeError);

      const none = await store.createAccount({ name: 'none', plan: { ...FREE, maxActiveKeys: 0 } });
      assert.equal(none.plan.maxActiveKeys, 0);
      await assert.rejects(store.issueKeyWithinCap(none.id, { scope: 'developer_runtime' }), KeyLimitReachedError);
      assert.equal((await store.listKeys(none.id)).length, 0);
      // The operator's own issue (issueKey) is not capped.
      await store.issueKey(none.id, { scope: 'developer_runtime' });

      await assert.rejects(store.issueKeyWithinCap('acct_nope', { scope: 'developer_runtime' }), /no account/);
      await store.disableAccount(paid.id);
      await assert.rejects(store.issueKeyWithinCap(paid.id, { scope: 'developer_runtime' }), AccountDisabledError);
      assert.equal((await store.listKeys(paid.id)).length, 0);
    });

    it('concurrent capped issues on two replicas never pass the cap together', async () => {
      const account = await store.createAccount({ name: 'burst', plan: { ...FREE, maxActiveKeys: 5 } });
      const replica = await openHostedStore(fixture.options);
      try {
        const attempts = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? store : replica).issueKeyWithinCap(account.id, { scope: 'developer_runtime' }));
        const results = await Promise.allSettled(attempts);
        const issued = results.filter((r) => r.status === 'fulfilled');
        const refused = results.filter((r) => r.status === 'rejected');
        assert.equal(issued.length, 5);
        for (const r of refused) assert.ok(r.reason instanceof KeyLimitReachedError, String(r.reason));
        assert.equal((await store.listKeys(account.id)).length, 5);
      } finally {
        await replica.close();
      }
    });
  });
}
