import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { runCliToEnd } from '../helpers/daemon-process.ts';
import { freshPostgresSchema } from '../helpers/hosted-stores.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from '../helpers/test-services.ts';

interface AccountJson { id: string; name: string; plan: { monthly_joule_allowance: number; hosted_entitlement: boolean; enterprise: boolean; max_active_keys: number; max_active_keys_default: boolean }; disabled_at: string | null }

describe('svc admin (as a process, on the embedded store)', () => {
  let dataDir: string;
  const admin = (...args: string[]) => runCliToEnd(['admin', ...args, '--data-dir', dataDir]);
  before(() => { dataDir = mkdtempSync(join(tmpdir(), 'svc-admin-')); });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates, lists and re-plans accounts; prints usage; makes sign-in links the server accepts', async () => {
    const created = await admin('accounts', 'create', '--name', 'Ada Labs', '--allowance', '250000', '--entitlement', '--json');
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as AccountJson;
    assert.match(account.id, /^acct_/);
    assert.deepEqual(account.plan, { monthly_joule_allowance: 250000, hosted_entitlement: true, enterprise: false, max_active_keys: 100, max_active_keys_default: true });
    assert.equal(account.disabled_at, null);

    const plain = await admin('accounts', 'create', '--name', 'Free');
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^acct_\S+ {2}"Free" {2}allowance 0 J\/month {2}entitlement no {2}enterprise no {2}max keys 10\n$/);

    const list = await admin('accounts', 'list', '--json');
    assert.deepEqual((JSON.parse(list.stdout) as { data: AccountJson[] }).data.map((a) => a.name), ['Ada Labs', 'Free']);

    const planned = await admin('plan', 'set', account.id, '--no-entitlement', '--enterprise', '--allowance', '1000', '--json');
    assert.equal(planned.code, 0, planned.stderr);
    assert.deepEqual((JSON.parse(planned.stdout) as AccountJson).plan, { monthly_joule_allowance: 1000, hosted_entitlement: false, enterprise: true, max_active_keys: 1000, max_active_keys_default: true });

    // Usage comes from the ledger: charge through the store, read it back through the CLI.
    const store = await openHostedStore({ dataDir });
    try {
      const { key } = await store.issueKey(account.id, { scope: 'supercomputer' });
      const at = new Date('2026-03-05T10:00:00Z');
      for (const [i, joules] of [12.5, 30].entries()) {
        const evidenceId = `ev_${i}`;
        await store.recordCharge({
          evidenceId, accountId: account.id, keyId: key.id, projectId: 'proj-a', idempotencyKey: null, at,
          route: { execution_plane: 'hosted', policy: 'supercomputer-fast', privacy_tier: 'standard', model: 'm', provider: 'p', latency_ms: 5, raw_joules: null, estimated_joules: joules, billable_joules: joules, fallback: false, fallback_reason: null, evidence_id: evidenceId },
          promptTokens: 1, completionTokens: 1, outcome: 'completed', response: null,
        });
      }
    } finally {
      await store.close();
    }
    const usage = await admin('usage', account.id, '--month', '2026-03', '--json');
    assert.equal(usage.code, 0, usage.stderr);
    const report = JSON.parse(usage.stdout) as { used_joules: number; remaining_joules: number; requests: number; daily: { date: string; joules: number }[]; projects: { project: string; joules: number }[] };
    assert.equal(report.used_joules, 42.5);
    assert.equal(report.remaining_joules, 957.5);
    assert.equal(report.requests, 2);
    assert.deepEqual(report.daily.map((d) => [d.date, d.joules]), [['2026-03-05', 42.5]]);
    assert.deepEqual(report.projects.map((p) => [p.project, p.joules]), [['proj-a', 42.5]]);
    const text = await admin('usage', account.id, '--month', '2026-03');
    assert.match(text.stdout, /2026-03: used 42\.5 J of 1000 J \(957\.5 J left\), 2 requests/);

    const link = await admin('sign-in-link', account.id, '--base-url', 'https://svc.example.com/', '--ttl', '10m');
    assert.equal(link.code, 0, link.stderr);
    const match = /^https:\/\/svc\.example\.com\/api\/session\/sign-in\?token=([A-Za-z0-9_-]{43})\n$/.exec(link.stdout);
    assert.ok(match !== null, link.stdout);
    const reopened = await openHostedStore({ dataDir });
    try {
      const redeemed = await reopened.redeemSignInToken(match[1]!, 60_000);
      assert.equal(redeemed?.session.accountId, account.id, 'the printed link signs in as the account');
    } finally {
      await reopened.close();
    }
  });

  it('disables and enables accounts, ends sessions, and sets the key cap', async () => {
    const created = await admin('accounts', 'create', '--name', 'Lifecycle', '--max-keys', '2', '--json');
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as AccountJson;
    assert.deepEqual([account.plan.max_active_keys, account.plan.max_active_keys_default], [2, false]);

    const store = await openHostedStore({ dataDir });
    let secret: string;
    try {
      await store.issueKeyWithinCap(account.id, { scope: 'developer_runtime' });
      secret = (await store.issueKeyWithinCap(account.id, { scope: 'developer_runtime' })).secret;
      await assert.rejects(store.issueKeyWithinCap(account.id, { scope: 'developer_runtime' }), /active keys/);
      for (let i = 0; i < 2; i++) {
        const { token } = await store.createSignInToken(account.id, 60_000);
        assert.ok((await store.redeemSignInToken(token, 60_000)) !== undefined);
      }
      await store.createSignInToken(account.id, 60_000);
    } finally {
      await store.close();
    }

    const revoked = await admin('sessions', 'revoke', account.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `${account.id}: ended 2 session(s), voided 1 unused sign-in link(s)\n`);
    const again = await admin('sessions', 'revoke', account.id, '--json');
    assert.deepEqual(JSON.parse(again.stdout), { account: account.id, sessions_ended: 0, sign_in_links_voided: 0 });

    const disabled = await admin('accounts', 'disable', account.id);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.match(disabled.stdout, /max keys 2 {2}DISABLED since \d{4}-\d\d-\d\dT/);
    const listed = JSON.parse((await admin('accounts', 'list', '--json')).stdout) as { data: AccountJson[] };
    assert.ok(listed.data.find((a) => a.id === account.id)?.disabled_at !== null);
    const link = await admin('sign-in-link', account.id);
    assert.equal(link.code, 1);
    assert.match(link.stderr, /is disabled: it cannot sign in \(svc admin accounts enable/);
    const check = async () => {
      const s = await openHostedStore({ dataDir });
      try {
        return (await s.checkKey(secret)).status;
      } finally {
        await s.close();
      }
    };
    assert.equal(await check(), 'account_disabled');

    const enabled = await admin('accounts', 'enable', account.id, '--json');
    assert.equal(enabled.code, 0, enabled.stderr);
    assert.equal((JSON.parse(enabled.stdout) as AccountJson).disabled_at, null);
    assert.equal(await check(), 'valid');

    const raised = await admin('plan', 'set', account.id, '--max-keys', 'default', '--json');
    assert.deepEqual([(JSON.parse(raised.stdout) as AccountJson).plan.max_active_keys, (JSON.parse(raised.stdout) as AccountJson).plan.max_active_keys_default], [10, true]);
    const zero = await admin('plan', 'set', account.id, '--max-keys', '0', '--json');
    assert.equal((JSON.parse(zero.stdout) as AccountJson).plan.max_active_keys, 0);
  });

  it('answers every mistake with one line on stderr and a non-zero exit', async () => {
    const cases: { args: string[]; pattern: RegExp }[] = [
      { args: ['accounts', 'create', '--name', ' '], pattern: /--name: give a name/ },
      { args: ['accounts', 'create', '--name', 'x', '--allowance', '-5'], pattern: /--allowance: '-5' is not a number of Joules/ },
      { args: ['accounts', 'create', '--name', 'x', '--allowance', '10MJ'], pattern: /not a number of Joules/ },
      { args: ['accounts', 'create'], pattern: /required option '--name <name>'/ },
      { args: ['plan', 'set', 'acct_nope', '--enterprise'], pattern: /no account 'acct_nope'/ },
      { args: ['plan', 'set', 'acct_nope'], pattern: /say what to change/ },
      { args: ['usage', 'acct_nope'], pattern: /no account 'acct_nope'/ },
      { args: ['usage', 'acct_nope', '--month', '2026-13'], pattern: /--month: '2026-13' is not a month/ },
      { args: ['sign-in-link', 'acct_nope'], pattern: /no account 'acct_nope'/ },
      { args: ['sign-in-link', 'acct_nope', '--ttl', 'soon'], pattern: /--ttl: 'soon' is not a duration/ },
      { args: ['sign-in-link', 'acct_nope', '--ttl', '30d'], pattern: /is not a duration|between 1s and 7d/ },
      { args: ['sign-in-link', 'acct_nope', '--base-url', 'ftp://x'], pattern: /--base-url: 'ftp:\/\/x' must be/ },
      { args: ['accounts', 'disable', 'acct_nope'], pattern: /no account 'acct_nope'/ },
      { args: ['accounts', 'enable', 'acct_nope'], pattern: /no account 'acct_nope'/ },
      { args: ['sessions', 'revoke', 'acct_nope'], pattern: /no account 'acct_nope'/ },
      { args: ['plan', 'set', 'acct_nope', '--max-keys', '-1'], pattern: /--max-keys: '-1' is not a number of keys/ },
      { args: ['plan', 'set', 'acct_nope', '--max-keys', 'lots'], pattern: /--max-keys: 'lots' is not a number of keys/ },
      { args: ['accounts', 'create', '--name', 'x', '--max-keys', '2000000'], pattern: /--max-keys: '2000000' is not a number of keys/ },
    ];
    for (const c of cases) {
      const run = await admin(...c.args);
      assert.notEqual(run.code, 0, c.args.join(' '));
      assert.equal(run.stdout, '');
      const lines = run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('(add --help'));
      assert.equal(lines.length, 1, `${c.args.join(' ')}: ${run.stderr}`);
      assert.match(lines[0]!, c.pattern);
      assert.doesNotMatch(run.stderr, /at .*\.ts:\d+/, 'no stack trace');
    }
    const badUrl = await runCliToEnd(['admin', 'accounts', 'list', '--data-dir', dataDir, '--database-url', 'mysql://x']);
    assert.equal(badUrl.code, 1);
    assert.match(badUrl.stderr, /^svc admin accounts list: cannot open the hosted store \(the --database-url database\): the hosted database URL must start with postgres:\/\//);
  });
});

describe('svc admin on PostgreSQL', { skip: await postgresUnavailable('the svc admin on PostgreSQL test') }, () => {
  it('creates and lists accounts in the shared database', async (t) => {
    const { schema, drop } = freshPostgresSchema();
    t.after(drop);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    // The CLI takes a URL only; the schema travels as the search path, the way a deployment would pin one.
    const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const created = await runCliToEnd(['admin', 'accounts', 'create', '--name', 'Pg', '--json', '--database-url', url]);
    assert.equal(created.code, 0, created.stderr);
    const listed = await runCliToEnd(['admin', 'accounts', 'list', '--json', '--database-url', url]);
    assert.deepEqual((JSON.parse(listed.stdout) as { data: AccountJson[] }).data.map((a) => a.name), ['Pg']);
  });
});
