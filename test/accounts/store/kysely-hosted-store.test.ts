/**
 * One suite, both stores: every behaviour of the HostedStore is checked on embedded SQLite and
 * on the machine's PostgreSQL (in a fresh schema), from the interface and from the tables.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostedStore } from '../../../src/accounts/hosted-store.ts';
import type { ChargeInput } from '../../../src/accounts/ledger-store.ts';
import type { Plan } from '../../../src/accounts/plan.ts';
import { newId } from '../../../src/shared/new-id.ts';
import { UnknownAccountError } from '../../../src/accounts/store/unknown-account-error.ts';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import { hostedStoreKinds, type HostedStoreFixture } from '../../helpers/hosted-stores.ts';

const PAID: Plan = { monthlyJouleAllowance: 10_000, hostedEntitlement: true, enterprise: false };
const FREE: Plan = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const mj = (joules: number): number => Math.round(joules * 1000);

function charge(accountId: string, keyId: string, billable: number, extra: Partial<ChargeInput> = {}): ChargeInput {
  const evidenceId = extra.evidenceId ?? newId('ev_');
  return {
    evidenceId,
    accountId,
    keyId,
    projectId: null,
    idempotencyKey: null,
    promptTokens: 12,
    completionTokens: 34,
    outcome: 'completed',
    response: { id: 'chatcmpl-1', choices: [{ message: { content: 'hi' } }] },
    ...extra,
    route: {
      execution_plane: 'supercomputer',
      policy: 'supercomputer-fast',
      privacy_tier: 'mesh_safe',
      model: 'svc-fast',
      provider: 'local-llama',
      latency_ms: 12.5,
      raw_joules: null,
      estimated_joules: billable,
      billable_joules: billable,
      fallback: false,
      fallback_reason: null,
      ...extra.route,
      evidence_id: evidenceId,
    },
  };
}

for (const { kind, open, unavailable } of hostedStoreKinds) {
  describe(`hosted store (${kind})`, { skip: await unavailable(`the hosted store (${kind}) tests`) }, () => {
    let fixture: HostedStoreFixture;
    let store: HostedStore;

    before(async () => {
      fixture = await open();
      store = fixture.store;
    });
    after(async () => {
      await fixture.cleanup();
    });

    it('reports its kind and answers ping', async () => {
      assert.equal(store.kind, kind);
      assert.equal(await store.ping(), true);
    });

    it('creates, lists and re-plans accounts, with allowances kept to the millijoule', async () => {
      const a = await store.createAccount({ name: 'Ada', plan: { monthlyJouleAllowance: 1234.567, hostedEntitlement: true, enterprise: true } });
      assert.match(a.id, /^acct_[A-Za-z0-9]{24}$/);
      assert.deepEqual(a.plan, { monthlyJouleAllowance: 1234.567, hostedEntitlement: true, enterprise: true });
      const fetched = await store.getAccount(a.id);
      assert.deepEqual(fetched, a);
      assert.ok((await store.listAccounts()).some((x) => x.id === a.id));

      const replanned = await store.setPlan(a.id, { hostedEntitlement: false });
      assert.deepEqual(replanned?.plan, { monthlyJouleAllowance: 1234.567, hostedEntitlement: false, enterprise: true });
      const again = await store.setPlan(a.id, { monthlyJouleAllowance: 5, enterprise: false });
      assert.deepEqual(again?.plan, { monthlyJouleAllowance: 5, hostedEntitlement: false, enterprise: false });
      assert.deepEqual((await store.getAccount(a.id))?.plan, again?.plan);

      assert.equal(await store.getAccount('acct_nope'), undefined);
      assert.equal(await store.setPlan('acct_nope', { enterprise: true }), undefined);
      await assert.rejects(store.createAccount({ name: 'x', plan: { ...PAID, monthlyJouleAllowance: Number.NaN } }), RangeError);
    });

    it('issues keys whose secret is shown once, stored only as its SHA-256, and never listed', async () => {
      const account = await store.createAccount({ name: 'Keys', plan: PAID });
      const dev = await store.issueKey(account.id, { scope: 'developer_runtime', name: 'laptop', project: 'p1' });
      const sk = await store.issueKey(account.id, { scope: 'supercomputer' });
      assert.match(dev.secret, /^svc_dk_[A-Za-z0-9_-]{43}$/);
      assert.match(sk.secret, /^svc_sk_[A-Za-z0-9_-]{43}$/);
      assert.match(dev.key.id, /^key_/);
      assert.equal(dev.key.prefix, dev.secret.slice(0, 12));
      assert.equal(dev.key.lastFour, dev.secret.slice(-4));
      assert.equal(dev.key.name, 'laptop');
      assert.equal(dev.key.project, 'p1');
      assert.equal(sk.key.name, null);
      assert.equal(dev.key.lastUsedAt, null);

      const listed = await store.listKeys(account.id);
      assert.deepEqual(listed.map((k) => k.id).sort(), [dev.key.id, sk.key.id].sort());
      const listedText = JSON.stringify(listed);
      for (const secret of [dev.secret, sk.secret]) {
        assert.ok(!listedText.includes(secret.slice(12)), 'a secret appears in the key list');
        assert.ok(!listedText.includes(sha256(secret)), 'a secret hash appears in the key list');
      }

      const rows = await fixture.raw('select * from api_keys where account_id = ?', [account.id]);
      assert.equal(rows.length, 2);
      const stored = JSON.stringify(rows);
      assert.ok(!stored.includes(dev.secret.slice(12)) && !stored.includes(sk.secret.slice(12)), 'a secret is stored');
      assert.deepEqual(rows.map((r) => r.secret_hash).sort(), [sha256(dev.secret), sha256(sk.secret)].sort());

      await assert.rejects(store.issueKey('acct_missing', { scope: 'developer_runtime' }), UnknownAccountError);
    });

    it('checks keys: valid with its account, unknown for anything else, revoked after revocation', async () => {
      const account = await store.createAccount({ name: 'Check', plan: PAID });
      const other = await store.createAccount({ name: 'Other', plan: PAID });
      const issued = await store.issueKey(account.id, { scope: 'supercomputer' });

      const valid = await store.checkKey(issued.secret);
      assert.equal(valid.status, 'valid');
      assert.ok(valid.status === 'valid');
      assert.equal(valid.key.id, issued.key.id);
      assert.equal(valid.account.id, account.id);
      assert.ok(valid.key.lastUsedAt instanceof Date);

      const tampered = issued.secret.slice(0, -1) + (issued.secret.endsWith('A') ? 'B' : 'A');
      for (const bad of [tampered, '', 'none', 'svc_sk_', `${issued.secret}x`, issued.secret.toUpperCase(), 'svc_sk_' + 'A'.repeat(43), "' or 1=1 --"]) {
        assert.deepEqual(await store.checkKey(bad), { status: 'unknown' }, bad);
      }

      // Another account can neither revoke nor see the key.
      assert.equal(await store.revokeKey(other.id, issued.key.id), undefined);
      assert.equal((await store.listKeys(other.id)).length, 0);
      assert.equal((await store.checkKey(issued.secret)).status, 'valid');

      const revoked = await store.revokeKey(account.id, issued.key.id);
      assert.ok(revoked?.revokedAt instanceof Date);
      const check = await store.checkKey(issued.secret);
      assert.equal(check.status, 'revoked');
      assert.ok(check.status === 'revoked' && check.key.id === issued.key.id);
      const twice = await store.revokeKey(account.id, issued.key.id);
      assert.equal(twice?.revokedAt?.getTime(), revoked.revokedAt.getTime(), 'a second revoke keeps the first time');
      assert.equal(await store.revokeKey(account.id, 'key_missing'), undefined);
    });

    it('writes last_used_at at most once a minute per key', async () => {
      const account = await store.createAccount({ name: 'Touch', plan: PAID });
      const issued = await store.issueKey(account.id, { scope: 'developer_runtime' });
      await store.checkKey(issued.secret);
      const [first] = await fixture.raw('select last_used_at from api_keys where id = ?', [issued.key.id]);
      assert.ok(first !== undefined && first.last_used_at !== null);
      await sleep(5);
      for (let i = 0; i < 5; i++) await store.checkKey(issued.secret);
      const [second] = await fixture.raw('select last_used_at from api_keys where id = ?', [issued.key.id]);
      assert.equal(Number(second?.last_used_at), Number(first.last_used_at));
    });

    it('redeems a sign-in token once, even when redeemed concurrently', async () => {
      const account = await store.createAccount({ name: 'Sign', plan: FREE });
      const { token, expiresAt } = await store.createSignInToken(account.id, 60_000);
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(expiresAt.getTime() > Date.now());
      const rows = await fixture.raw('select * from sign_in_tokens where account_id = ?', [account.id]);
      assert.equal(rows[0]?.token_hash, sha256(token));
      assert.ok(!JSON.stringify(rows).includes(token));

      const redeemed = await store.redeemSignInToken(token, 60_000);
      assert.equal(redeemed?.session.accountId, account.id);
      assert.equal(await store.redeemSignInToken(token, 60_000), undefined, 'a second redeem');

      const fresh = await store.createSignInToken(account.id, 60_000);
      const results = await Promise.all(Array.from({ length: 20 }, () => store.redeemSignInToken(fresh.token, 60_000)));
      assert.equal(results.filter((r) => r !== undefined).length, 1, 'concurrent redeems yield one session');

      const short = await store.createSignInToken(account.id, 1);
      await sleep(10);
      assert.equal(await store.redeemSignInToken(short.token, 60_000), undefined, 'an expired token');
      assert.equal(await store.redeemSignInToken('garbage', 60_000), undefined);
      await assert.rejects(store.createSignInToken('acct_missing', 1000), UnknownAccountError);
    });

    it('checks, ends and expires sessions', async () => {
      const account = await store.createAccount({ name: 'Sess', plan: FREE });
      const { token } = await store.createSignInToken(account.id, 60_000);
      const redeemed = await store.redeemSignInToken(token, 60_000);
      assert.ok(redeemed !== undefined);
      assert.match(redeemed.token, /^svc_ses_[A-Za-z0-9_-]{43}$/, 'session tokens have their own prefix, unlike API keys');
      const rows = await fixture.raw('select token_hash from sessions where id = ?', [redeemed.session.id]);
      assert.equal(rows[0]?.token_hash, sha256(redeemed.token));

      const checked = await store.checkSession(redeemed.token);
      assert.equal(checked?.account.id, account.id);
      assert.equal(checked?.session.id, redeemed.session.id);
      assert.equal(await store.checkSession(token), undefined, 'the sign-in token is not a session');
      await store.endSession(redeemed.token);
      assert.equal(await store.checkSession(redeemed.token), undefined);

      const shortLink = await store.createSignInToken(account.id, 60_000);
      const short = await store.redeemSignInToken(shortLink.token, 30);
      assert.ok(short !== undefined);
      assert.ok((await store.checkSession(short.token)) !== undefined);
      await sleep(60);
      assert.equal(await store.checkSession(short.token), undefined, 'an expired session');
      assert.equal(await store.checkSession(''), undefined);
    });

    it('records a charge with its evidence and bills an Idempotency-Key once', async () => {
      const account = await store.createAccount({ name: 'Charge', plan: PAID });
      const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const first = await store.recordCharge(charge(account.id, key.id, 1.2345, { idempotencyKey: 'idem-1', projectId: 'proj', route: { raw_joules: 0.9876 } as never }));
      assert.equal(first.status, 'recorded');
      assert.equal(first.entry.route.billable_joules, 1.235, 'kept to the millijoule');
      assert.equal(first.entry.route.raw_joules, 0.988);
      assert.deepEqual(first.entry.response, { id: 'chatcmpl-1', choices: [{ message: { content: 'hi' } }] });

      const retry = await store.recordCharge(charge(account.id, key.id, 9, { idempotencyKey: 'idem-1' }));
      assert.equal(retry.status, 'duplicate');
      assert.deepEqual(retry.entry, first.entry);
      assert.deepEqual(await store.findEvidence(account.id, first.entry.evidenceId), first.entry);
      assert.deepEqual(await store.findByIdempotencyKey(account.id, 'idem-1'), first.entry);
      assert.equal(await store.findEvidence(account.id, retry.status === 'duplicate' ? 'ev_other' : ''), undefined);
      assert.deepEqual(await store.ledgerTotal(account.id, first.entry.createdAt.toISOString().slice(0, 7)), { joules: 1.235, rows: 1 });
      assert.equal((await store.allowance(account.id)).usedJoules, 1.235);

      // Requests without a key never collide; the same key in another account is another request.
      const other = await store.createAccount({ name: 'Charge2', plan: PAID });
      const otherKey = await store.issueKey(other.id, { scope: 'supercomputer' });
      assert.equal((await store.recordCharge(charge(other.id, otherKey.key.id, 1, { idempotencyKey: 'idem-1' }))).status, 'recorded');
      assert.equal((await store.recordCharge(charge(account.id, key.id, 1))).status, 'recorded');
      assert.equal((await store.recordCharge(charge(account.id, key.id, 1))).status, 'recorded');
      assert.equal(await store.findEvidence(other.id, first.entry.evidenceId), undefined, 'evidence is own-account only');

      await assert.rejects(store.recordCharge({ ...charge(account.id, key.id, 1), evidenceId: 'ev_mismatch' }), TypeError);
      await assert.rejects(store.recordCharge(charge(account.id, key.id, -1)), RangeError);
      await assert.rejects(store.recordCharge(charge(account.id, key.id, Number.POSITIVE_INFINITY)), RangeError);
      assert.equal((await store.ledgerTotal(account.id, first.entry.createdAt.toISOString().slice(0, 7))).rows, 3, 'rejected charges wrote nothing');
    });

    it('bills 50 concurrent charges with one Idempotency-Key once', async () => {
      const account = await store.createAccount({ name: 'Burst', plan: PAID });
      const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const results = await Promise.all(Array.from({ length: 50 }, () => store.recordCharge(charge(account.id, key.id, 2.5, { idempotencyKey: 'same' }))));
      assert.equal(results.filter((r) => r.status === 'recorded').length, 1);
      const evidence = new Set(results.map((r) => r.entry.evidenceId));
      assert.equal(evidence.size, 1, 'every duplicate returns the one recorded entry');
      const month = results[0]?.entry.createdAt.toISOString().slice(0, 7) ?? '';
      assert.deepEqual(await store.ledgerTotal(account.id, month), { joules: 2.5, rows: 1 });
      assert.equal((await store.allowance(account.id)).usedJoules, 2.5);
    });

    it('computes the allowance from the monthly counter, never below zero', async () => {
      const account = await store.createAccount({ name: 'Allow', plan: { monthlyJouleAllowance: 10, hostedEntitlement: true, enterprise: false } });
      const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const at = new Date(Date.UTC(2031, 4, 17, 12));
      assert.deepEqual(await store.allowance(account.id, at), { month: '2031-05', allowanceJoules: 10, usedJoules: 0, remainingJoules: 10 });
      await store.recordCharge(charge(account.id, key.id, 1.001, { at }));
      await store.recordCharge(charge(account.id, key.id, 2.5, { at }));
      assert.deepEqual(await store.allowance(account.id, at), { month: '2031-05', allowanceJoules: 10, usedJoules: 3.501, remainingJoules: 6.499 });
      assert.equal((await store.allowance(account.id, new Date(Date.UTC(2031, 5, 1)))).usedJoules, 0, 'a new month starts at zero');
      await store.recordCharge(charge(account.id, key.id, 7, { at }));
      assert.deepEqual(await store.allowance(account.id, at), { month: '2031-05', allowanceJoules: 10, usedJoules: 10.501, remainingJoules: 0 });
      const counter = await fixture.raw('select used_mj from usage_counters where account_id = ? and month = ?', [account.id, '2031-05']);
      assert.equal(Number(counter[0]?.used_mj), 10_501);
      assert.deepEqual(await store.allowance('acct_missing', at), { month: '2031-05', allowanceJoules: 0, usedJoules: 0, remainingJoules: 0 });
    });

    it('builds the usage report from the ledger: days, key, projects, evidence, equal to the ledger total', async () => {
      const account = await store.createAccount({ name: 'Usage', plan: { monthlyJouleAllowance: 1000, hostedEntitlement: true, enterprise: false } });
      const k1 = (await store.issueKey(account.id, { scope: 'supercomputer' })).key;
      const k2 = (await store.issueKey(account.id, { scope: 'supercomputer' })).key;
      const day = (d: number, minute = 0): Date => new Date(Date.UTC(2030, 1, d, 23, minute));
      const plan: [Date, typeof k1, string | null, number][] = [
        [day(3), k1, 'alpha', 0.001], [day(3, 1), k1, null, 1.111], [day(3, 2), k2, 'beta', 2.222],
        [day(28), k1, 'alpha', 3.333], [day(28, 5), k2, 'alpha', 4.444], [day(14), k2, null, 0],
      ];
      const recorded = [];
      for (const [at, key, projectId, joules] of plan) recorded.push(await store.recordCharge(charge(account.id, key.id, joules, { at, projectId })));
      // Another month and another account stay out of the report.
      await store.recordCharge(charge(account.id, k1.id, 50, { at: new Date(Date.UTC(2030, 2, 1)) }));
      const stranger = await store.createAccount({ name: 'Stranger', plan: PAID });
      const sKey = (await store.issueKey(stranger.id, { scope: 'supercomputer' })).key;
      await store.recordCharge(charge(stranger.id, sKey.id, 99, { at: day(3), projectId: 'alpha' }));

      const report = await store.usage({ accountId: account.id, keyId: k1.id, month: '2030-02', evidenceLimit: 2 });
      assert.equal(report.month, '2030-02');
      assert.deepEqual(report.allowance, { month: '2030-02', allowanceJoules: 1000, usedJoules: 11.111, remainingJoules: 988.889 });
      assert.deepEqual(report.daily, [
        { date: '2030-02-03', joules: 3.334, requests: 3, promptTokens: 36, completionTokens: 102 },
        { date: '2030-02-14', joules: 0, requests: 1, promptTokens: 12, completionTokens: 34 },
        { date: '2030-02-28', joules: 7.777, requests: 2, promptTokens: 24, completionTokens: 68 },
      ], 'each day: its Joules, requests and the tokens of its rows (12 prompt, 34 completion each)');
      assert.equal(report.key!.keyId, k1.id);
      assert.equal(report.key!.requests, 3);
      assert.deepEqual([report.key!.promptTokens, report.key!.completionTokens], [36, 102]);
      assert.equal(report.key!.joules, 4.445);
      assert.deepEqual(report.key!.evidence.map((e) => e.evidenceId), [recorded[3]?.entry.evidenceId, recorded[1]?.entry.evidenceId], 'newest first, limited');
      assert.deepEqual(report.key!.evidence.map((e) => e.joules), [3.333, 1.111]);
      assert.deepEqual(report.projects.map((p) => [p.projectId, p.requests, p.joules, p.promptTokens, p.completionTokens]), [['alpha', 3, 7.778, 36, 102], ['beta', 1, 2.222, 12, 34]]);
      assert.deepEqual(report.projects[0]?.evidence.map((e) => e.evidenceId), [recorded[4]?.entry.evidenceId, recorded[3]?.entry.evidenceId]);
      assert.deepEqual(report.projects[1]?.evidence.map((e) => [e.evidenceId, e.joules]), [[recorded[2]?.entry.evidenceId, 2.222]]);

      // A key's report totals no other key and lists no recent entries: neither is asked for.
      assert.deepEqual(report.keys, []);
      assert.equal(report.keysTruncated, false);
      assert.deepEqual(report.recent, []);
      // A signed-in session's report: no key of its own, every key (the most Joules first), the
      // account's newest entries with their Joules and the route's non-billing facts.
      const whole = await store.usage({ accountId: account.id, month: '2030-02', recentLimit: 2, perKey: true });
      assert.equal(whole.key, undefined);
      assert.deepEqual(whole.keys.map((k) => [k.keyId, k.requests, k.joules, k.promptTokens, k.completionTokens]), [[k2.id, 3, 6.666, 36, 102], [k1.id, 3, 4.445, 36, 102]]);
      assert.equal(whole.keysTruncated, false);
      assert.deepEqual(whole.recent.map((e) => e.evidenceId), [recorded[4]?.entry.evidenceId, recorded[3]?.entry.evidenceId]);
      const route = recorded[4]!.entry.route;
      assert.deepEqual(whole.recent[0], {
        evidenceId: route.evidence_id, createdAt: recorded[4]!.entry.createdAt, keyId: k2.id, projectId: 'alpha', joules: 4.444,
        route: { policy: route.policy, execution_plane: route.execution_plane, privacy_tier: route.privacy_tier, model: route.model, provider: route.provider, latency_ms: route.latency_ms, fallback: route.fallback, fallback_reason: route.fallback_reason },
      });
      // The stored response (idempotent replays) is never read for the report: a row whose
      // stored JSON is bad does not turn the report into an error.
      await fixture.raw('update ledger set response = ? where evidence_id = ?', ['{"not json', recorded[4]!.entry.evidenceId]);
      const despite = await store.usage({ accountId: account.id, month: '2030-02', recentLimit: 2, perKey: true });
      assert.deepEqual(despite.recent, whole.recent);

      const total = await store.ledgerTotal(account.id, '2030-02');
      assert.equal(total.rows, 6);
      assert.equal(mj(total.joules), report.daily.reduce((sum, d) => sum + mj(d.joules), 0), 'daily sums equal the ledger to the millijoule');
      assert.equal(mj(total.joules), mj(report.allowance.usedJoules), 'the counter equals the ledger');

      const empty = await store.usage({ accountId: account.id, keyId: k2.id, month: '2029-12' });
      assert.deepEqual([empty.daily, empty.projects, empty.key!.requests, empty.key!.joules, empty.key!.promptTokens, empty.key!.completionTokens, empty.key!.evidence], [[], [], 0, 0, 0, 0, []]);
      await assert.rejects(store.usage({ accountId: account.id, keyId: k1.id, month: '2030-13' }), RangeError);
    });

    it('keeps the counter equal to the ledger under 500 concurrent charges, written inline (`alone`) or by the writer thread', async () => {
      const account = await store.createAccount({ name: 'Load', plan: PAID });
      const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const at = new Date(Date.UTC(2032, 0, 5));
      // Every 5th request reuses an Idempotency-Key of an earlier one: retries under load. Every
      // third says it is alone: the embedded store writes those inline whenever its writer is idle.
      const inputs = Array.from({ length: 500 }, (_, i) => charge(account.id, key.id, ((i * 37) % 1000) / 1000 + 0.001, { at, idempotencyKey: `k-${i % 5 === 4 ? i - 1 : i}`, alone: i % 3 === 0 }));
      const results = await Promise.all(inputs.map((input) => store.recordCharge(input)));
      const recorded = results.filter((r) => r.status === 'recorded');
      assert.equal(recorded.length, 400);
      const expectedMj = recorded.reduce((sum, r) => sum + mj(r.entry.route.billable_joules), 0);
      const total = await store.ledgerTotal(account.id, '2032-01');
      assert.deepEqual([total.rows, mj(total.joules)], [400, expectedMj]);
      assert.equal(mj((await store.allowance(account.id, at)).usedJoules), expectedMj);
    });

    it('releases Idempotency-Keys older than a cutoff: the key is free again, the kept answer dropped, the row and its Joules stay', async () => {
      const account = await store.createAccount({ name: 'Release', plan: PAID });
      const key = (await store.issueKey(account.id, { scope: 'supercomputer' })).key;
      const old = await store.recordCharge(charge(account.id, key.id, 2, { idempotencyKey: 'old', at: new Date(Date.UTC(2035, 0, 1)) }));
      await store.recordCharge(charge(account.id, key.id, 3, { idempotencyKey: 'new', at: new Date(Date.UTC(2035, 0, 3)) }));
      // The suite's other rows are older still, and are released too.
      assert.ok(await store.releaseIdempotencyKeys(new Date(Date.UTC(2035, 0, 2))) >= 1);
      assert.equal(await store.findByIdempotencyKey(account.id, 'old'), undefined);
      assert.notEqual(await store.findByIdempotencyKey(account.id, 'new'), undefined, 'a younger key still binds');
      const kept = await store.findEvidence(account.id, old.entry.evidenceId);
      assert.equal(kept?.route.billable_joules, 2);
      assert.equal(kept?.response, null);
      assert.equal(kept?.idempotencyKey, null);
      // The key binds a new request now.
      assert.equal((await store.recordCharge(charge(account.id, key.id, 1, { idempotencyKey: 'old', at: new Date(Date.UTC(2035, 0, 4)) }))).status, 'recorded');
      assert.deepEqual(await store.ledgerTotal(account.id, '2035-01'), { joules: 6, rows: 3 });
      assert.equal(await store.releaseIdempotencyKeys(new Date(Date.UTC(2035, 0, 2))), 0, 'nothing left to release');
    });

    it('a valid key comes with its account\'s allowance for this month, the same a separate read gives', async () => {
      const account = await store.createAccount({ name: 'With allowance', plan: { ...PAID, monthlyJouleAllowance: 50 } });
      const issued = await store.issueKey(account.id, { scope: 'supercomputer' });
      const fresh = await store.checkKey(issued.secret);
      assert.equal(fresh.status, 'valid');
      assert.deepEqual(fresh.status === 'valid' ? fresh.allowance : undefined, await store.allowance(account.id));
      await store.recordCharge(charge(account.id, issued.key.id, 12.5));
      const after = await store.checkKey(issued.secret);
      assert.deepEqual(after.status === 'valid' ? after.allowance : undefined, await store.allowance(account.id));
      assert.equal(after.status === 'valid' ? after.allowance.remainingJoules : undefined, 37.5);
    });

    it('a usage report lists at most 100 projects, the heaviest first, and says when there were more', async () => {
      const account = await store.createAccount({ name: 'Many projects', plan: PAID });
      const key = (await store.issueKey(account.id, { scope: 'supercomputer' })).key;
      const at = new Date(Date.UTC(2031, 4, 2));
      // Project ids come from a header: a client can send as many as it likes.
      await Promise.all(Array.from({ length: 105 }, (_, i) => store.recordCharge(charge(account.id, key.id, i + 1, { at, projectId: `p${i}` }))));
      const report = await store.usage({ accountId: account.id, keyId: key.id, month: '2031-05', evidenceLimit: 1 });
      assert.equal(report.projects.length, 100);
      assert.equal(report.projectsTruncated, true);
      assert.deepEqual(report.projects.slice(0, 2).map((p) => [p.projectId, p.joules]), [['p104', 105], ['p103', 104]]);
      assert.ok(!report.projects.some((p) => ['p0', 'p1', 'p2', 'p3', 'p4'].includes(p.projectId)), 'the lightest five are left out');
      assert.equal((await store.usage({ accountId: account.id, keyId: key.id, month: '2031-04' })).projectsTruncated, false);
    });

    it('lists key hashes (revoked keys too) per account or for all, matching the secrets', async () => {
      const a = await store.createAccount({ name: 'Hashes A', plan: FREE });
      const b = await store.createAccount({ name: 'Hashes B', plan: PAID });
      const a1 = await store.issueKey(a.id, { scope: 'developer_runtime', project: 'proj-a', name: 'laptop' });
      const a2 = await store.issueKey(a.id, { scope: 'developer_runtime' });
      const b1 = await store.issueKey(b.id, { scope: 'supercomputer' });
      await store.revokeKey(a.id, a2.key.id);
      // Keys issued in the same millisecond are ordered by their (random) ids: look them up by id.
      const ofA = new Map((await store.listKeyHashes(a.id)).map((h) => [h.key.id, h]));
      assert.deepEqual([...ofA.keys()].sort(), [a1.key.id, a2.key.id].sort());
      assert.equal(ofA.get(a1.key.id)?.secretSha256, sha256(a1.secret));
      assert.equal(ofA.get(a2.key.id)?.secretSha256, sha256(a2.secret));
      assert.equal(ofA.get(a1.key.id)?.key.project, 'proj-a');
      assert.equal(ofA.get(a1.key.id)?.key.name, 'laptop');
      assert.equal(ofA.get(a1.key.id)?.key.revokedAt, null);
      assert.ok(ofA.get(a2.key.id)?.key.revokedAt instanceof Date);
      const all = new Map((await store.listKeyHashes()).map((h) => [h.key.id, h]));
      for (const issued of [a1, a2, b1]) assert.equal(all.get(issued.key.id)?.secretSha256, sha256(issued.secret));
      assert.equal(JSON.stringify([...all.values()]).includes(b1.secret), false);
      assert.deepEqual(await store.listKeyHashes('acct_nobody'), []);
    });

    it('a key check follows at once what another connection or process changed (revocation, plan, charges) and this instance\'s own writes', async () => {
      const ph = (n: number): string => (kind === 'sqlite' ? '?' : `$${n}`);
      const account = await store.createAccount({ name: 'Watched', plan: { ...PAID, monthlyJouleAllowance: 100 } });
      const issued = await store.issueKey(account.id, { scope: 'supercomputer' });
      const other = await store.issueKey(account.id, { scope: 'supercomputer' });
      // Checked twice first, so an embedded store serves the next checks from its memory.
      for (let i = 0; i < 2; i++) assert.equal((await store.checkKey(issued.secret)).status, 'valid');
      const allowanceOf = async (secret: string) => {
        const check = await store.checkKey(secret);
        assert.equal(check.status, 'valid');
        return check.status === 'valid' ? check : assert.fail('not valid');
      };

      // This instance's own charges move the remaining allowance of every key of the account.
      await store.recordCharge(charge(account.id, issued.key.id, 10));
      assert.equal((await allowanceOf(issued.secret)).allowance.remainingJoules, 90);
      assert.equal((await allowanceOf(other.secret)).allowance.remainingJoules, 90);

      // Another connection: a charge, a new plan, then a revocation, each seen on the next check.
      await fixture.raw(`insert into ledger (evidence_id, account_id, key_id, created_at, month, day, execution_plane, policy, privacy_tier, model, provider, latency_ms, estimated_mj, billable_mj, fallback, outcome, prompt_tokens, completion_tokens)
        values (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}, 'supercomputer', 'supercomputer-fast', 'mesh_safe', 'm', 'p', 1, 5000, 5000, 0, 'completed', 1, 1)`,
      [newId('ev_'), account.id, issued.key.id, Date.now(), new Date().toISOString().slice(0, 7), new Date().toISOString().slice(0, 10)]);
      assert.equal((await allowanceOf(issued.secret)).allowance.remainingJoules, 85);
      await fixture.raw(`update accounts set hosted_entitlement = 0, monthly_allowance_mj = 200000 where id = ${ph(1)}`, [account.id]);
      const replanned = await allowanceOf(issued.secret);
      assert.equal(replanned.account.plan.hostedEntitlement, false);
      assert.equal(replanned.allowance.remainingJoules, 185);
      await fixture.raw(`update api_keys set revoked_at = ${ph(1)} where id = ${ph(2)}`, [Date.now(), issued.key.id]);
      assert.equal((await store.checkKey(issued.secret)).status, 'revoked');
      assert.equal((await allowanceOf(other.secret)).allowance.remainingJoules, 185);

      // This instance's own plan change and revocation.
      const third = await store.issueKey(account.id, { scope: 'supercomputer' });
      assert.equal((await allowanceOf(third.secret)).account.plan.hostedEntitlement, false);
      await store.setPlan(account.id, { hostedEntitlement: true });
      assert.equal((await allowanceOf(third.secret)).account.plan.hostedEntitlement, true);
      await store.revokeKey(account.id, third.key.id);
      assert.equal((await store.checkKey(third.secret)).status, 'revoked');
    });

    it('opens a second instance on the same data that sees everything (a restart, or a replica)', async () => {
      const account = await store.createAccount({ name: 'Shared', plan: PAID });
      const issued = await store.issueKey(account.id, { scope: 'supercomputer' });
      await store.recordCharge(charge(account.id, issued.key.id, 4.2, { idempotencyKey: 'shared' }));
      if (kind === 'sqlite') {
        // One SQLite file has one writer process; a restart closes the first instance before.
        await store.close();
        store = await openHostedStore(fixture.options);
        fixture.store = store;
      }
      const second = kind === 'sqlite' ? store : await openHostedStore(fixture.options);
      try {
        assert.equal((await second.checkKey(issued.secret)).status, 'valid');
        assert.equal((await second.getAccount(account.id))?.name, 'Shared');
        const dup = await second.recordCharge(charge(account.id, issued.key.id, 1, { idempotencyKey: 'shared' }));
        assert.equal(dup.status, 'duplicate');
        assert.equal((await second.allowance(account.id)).usedJoules, 4.2);
      } finally {
        if (second !== store) await second.close();
      }
    });
  });
}
