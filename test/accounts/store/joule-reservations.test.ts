import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openHostedStore } from '../../../src/accounts/store/open-hosted-store.ts';
import type { HostedStore } from '../../../src/accounts/hosted-store.ts';
import type { ChargeInput } from '../../../src/accounts/ledger-store.ts';
import { newId } from '../../../src/shared/new-id.ts';
import { hostedStoreKinds } from '../../helpers/hosted-stores.ts';
import { postgresUnavailable } from '../../helpers/test-services.ts';

const PAID = (allowance: number) => ({ monthlyJouleAllowance: allowance, hostedEntitlement: true, enterprise: false });

function charge(accountId: string, keyId: string, billable: number): ChargeInput {
  const evidenceId = newId('ev_');
  return {
    evidenceId, accountId, keyId, projectId: null, idempotencyKey: null, promptTokens: 1, completionTokens: 1, outcome: 'completed', response: null,
    route: {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'm', provider: 'p', latency_ms: 1,
      raw_joules: null, estimated_joules: billable, billable_joules: billable, fallback: false, fallback_reason: null, evidence_id: evidenceId,
    },
  };
}

async function accountWithKey(store: HostedStore, allowance: number) {
  const account = await store.createAccount({ name: 'reserve', plan: PAID(allowance) });
  const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
  return { accountId: account.id, keyId: key.id };
}

for (const kind of hostedStoreKinds) {
  describe(`[${kind.kind}] Joule reservations`, { skip: await kind.unavailable(`the [${kind.kind}] Joule reservation tests`) }, () => {
    it('grant what is free and no more: concurrent reservations never hold more than the allowance', async (t) => {
      const f = await kind.open();
      t.after(() => f.cleanup());
      const { accountId } = await accountWithKey(f.store, 10);
      // A second instance on the same data: on PostgreSQL another replica (the embedded store is one process).
      const other = f.kind === 'postgres' ? await openHostedStore(f.options) : f.store;
      if (other !== f.store) t.after(() => other.close());
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? f.store : other).reserveJoules({ accountId, joules: 1.5 })));
      const granted = results.flatMap((r) => (r.reservation === undefined ? [] : [r.reservation.joules]));
      const total = Math.round(granted.reduce((a, b) => a + b, 0) * 1000) / 1000;
      assert.equal(total, 10, `granted ${granted.join(', ')}`);
      // Six whole grants and one of the 1 J left.
      assert.deepEqual(granted.sort(), [1, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]);
      const refused = results.find((r) => r.reservation === undefined)!;
      assert.equal(refused.allowance.remainingJoules, 0);
      assert.equal(refused.allowance.usedJoules, 0, 'held, not used');
    });

    it('a charge settles its reservation: the row counts instead; a release gives it back; both are idempotent', async (t) => {
      const f = await kind.open();
      t.after(() => f.cleanup());
      const { accountId, keyId } = await accountWithKey(f.store, 10);
      const first = (await f.store.reserveJoules({ accountId, joules: 6 })).reservation!;
      const second = (await f.store.reserveJoules({ accountId, joules: 6 })).reservation!;
      assert.equal(second.joules, 4, 'what was free');
      assert.equal((await f.store.reserveJoules({ accountId, joules: 1 })).reservation, undefined);
      // The first request cost 2.5 J: its 6 J are given back and 2.5 J are used.
      await f.store.recordCharge({ ...charge(accountId, keyId, 2.5), reservation: first });
      const after = await f.store.reserveJoules({ accountId, joules: 100 });
      assert.equal(after.reservation?.joules, 3.5, '10 − 2.5 used − 4 held');
      await f.store.releaseReservation(second);
      await f.store.releaseReservation(second);
      await f.store.releaseReservation(first);
      const last = await f.store.reserveJoules({ accountId, joules: 100 });
      assert.equal(last.reservation?.joules, 4, '10 − 2.5 used − 3.5 held');
      assert.equal(last.allowance.usedJoules, 2.5);
    });

    it('a charge that fails to store still gives its reservation back', async (t) => {
      const f = await kind.open();
      t.after(() => f.cleanup());
      const { accountId, keyId } = await accountWithKey(f.store, 10);
      const held = (await f.store.reserveJoules({ accountId, joules: 10 })).reservation!;
      // evidenceId and route.evidence_id differ: the store refuses the row.
      await assert.rejects(f.store.recordCharge({ ...charge(accountId, keyId, 1), evidenceId: 'ev_other', reservation: held }));
      assert.equal((await f.store.reserveJoules({ accountId, joules: 10 })).reservation?.joules, 10);
    });

    it('an unknown account gets nothing; nonsense amounts are refused', async (t) => {
      const f = await kind.open();
      t.after(() => f.cleanup());
      assert.equal((await f.store.reserveJoules({ accountId: 'acct_missing', joules: 1 })).reservation, undefined);
      const { accountId } = await accountWithKey(f.store, 10);
      await assert.rejects(f.store.reserveJoules({ accountId, joules: -1 }), RangeError);
      await assert.rejects(f.store.reserveJoules({ accountId, joules: Number.NaN }), RangeError);
    });
  });
}

describe('[sqlite] the allowance read with the key', () => {
  it('stands for a fresh read only while nothing was released since: a charge stored after it is counted', async (t) => {
    const f = await hostedStoreKinds.find((k) => k.kind === 'sqlite')!.open();
    t.after(() => f.cleanup());
    const account = await f.store.createAccount({ name: 'seen', plan: PAID(10) });
    const { key, secret } = await f.store.issueKey(account.id, { scope: 'supercomputer' });
    const check = await f.store.checkKey(secret);
    assert.equal(check.status, 'valid');
    const seen = check.status === 'valid' ? check.allowance : undefined;
    // Another request reserves, runs and is charged 5 J after that read.
    const other = (await f.store.reserveJoules({ accountId: account.id, joules: 6 })).reservation!;
    await f.store.recordCharge({ ...charge(account.id, key.id, 5), reservation: other });
    // The read said 0 J used; 5 J are: only 5 J are free.
    assert.equal((await f.store.reserveJoules({ accountId: account.id, joules: 10, seen })).reservation?.joules, 5);
    // Read again with nothing released since: it stands (and still counts what is held).
    const fresh = await f.store.checkKey(secret);
    const again = await f.store.reserveJoules({ accountId: account.id, joules: 10, seen: fresh.status === 'valid' ? fresh.allowance : undefined });
    assert.equal(again.reservation, undefined, 'the 5 J granted above are held');
    assert.equal(again.allowance.usedJoules, 5);
  });
});

describe('[sqlite] a reservation never given back', () => {
  it('stops holding the allowance once it has expired', async (t) => {
    const f = await hostedStoreKinds.find((k) => k.kind === 'sqlite')!.open();
    t.after(() => f.cleanup());
    const { accountId } = await accountWithKey(f.store, 10);
    const hourAgo = new Date(Date.now() - 60 * 60_000 - 1000);
    assert.equal((await f.store.reserveJoules({ accountId, joules: 6, at: hourAgo })).reservation?.joules, 6);
    assert.equal((await f.store.reserveJoules({ accountId, joules: 100 })).reservation?.joules, 10, 'the lost 6 J hold nothing now');
  });
});

describe('[postgres] a reservation its replica never settled', { skip: await postgresUnavailable('the [postgres] expired-reservation test') }, () => {
  it('stops counting once it has expired, on every replica; live ones still count', async (t) => {
    const f = await hostedStoreKinds.find((k) => k.kind === 'postgres')!.open();
    t.after(() => f.cleanup());
    const { accountId } = await accountWithKey(f.store, 10);
    // A replica reserved 6 J an hour ago and died; a live request holds the other 4 J.
    const hourAgo = new Date(Date.now() - 60 * 60_000 - 1000);
    assert.equal((await f.store.reserveJoules({ accountId, joules: 6, at: hourAgo })).reservation?.joules, 6);
    assert.equal((await f.store.reserveJoules({ accountId, joules: 4 })).reservation?.joules, 4);
    const replica = await openHostedStore(f.options);
    t.after(() => replica.close());
    // The dead replica's 6 J are free again; the live request's 4 J stay held.
    assert.equal((await replica.reserveJoules({ accountId, joules: 100 })).reservation?.joules, 6);
  });
});
