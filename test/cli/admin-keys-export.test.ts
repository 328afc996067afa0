import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { registerKeysExport } from '../../src/cli/admin-keys-export.ts';
import { parseDeveloperKeyFile } from '../../src/accounts/developer-keys/developer-key-file.ts';
import type { IssuedKey } from '../../src/accounts/key-store.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { UserError } from '../../src/shared/user-error.ts';
import { runCliToEnd } from '../helpers/daemon-process.ts';

const FREE = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };

/** A program with `admin` as `svc admin` will be, and the export registered on it. */
async function run(args: string[]): Promise<{ stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const program = new Command('svc').exitOverride();
  const admin = program.command('admin').exitOverride();
  registerKeysExport(admin, { output: (t) => { stdout += t; }, report: (t) => { stderr += t; } }).exitOverride();
  await program.parseAsync(['admin', 'keys', 'export', ...args], { from: 'user' });
  return { stdout, stderr };
}

describe('svc admin keys export', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keys-export-'));
  const dataDir = join(dir, 'hosted');
  let accountId = '';
  let other = '';
  const issued: IssuedKey[] = [];
  before(async () => {
    const store = await openHostedStore({ dataDir });
    const account = await store.createAccount({ name: 'A', plan: FREE });
    const second = await store.createAccount({ name: 'B', plan: FREE });
    accountId = account.id;
    other = second.id;
    issued.push(await store.issueKey(account.id, { scope: 'developer_runtime', name: 'laptop' }));
    issued.push(await store.issueKey(account.id, { scope: 'developer_runtime' }));
    issued.push(await store.issueKey(second.id, { scope: 'developer_runtime' }));
    await store.revokeKey(account.id, issued[1]!.key.id);
    await store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every account\'s keys to stdout by default, hashes only', async () => {
    const { stdout, stderr } = await run(['--data-dir', dataDir]);
    const file = parseDeveloperKeyFile(stdout);
    assert.equal(file.keys.length, 3);
    for (const key of issued) assert.equal(stdout.includes(key.secret), false);
    assert.equal(stderr, 'exported 3 keys (2 active, 1 revoked)\n');
  });

  it('writes one account\'s keys to --out atomically, owner-only', async () => {
    const out = join(dir, 'keys.json');
    const { stdout, stderr } = await run(['--data-dir', dataDir, '--account', accountId, '--out', out]);
    assert.equal(stdout, '');
    assert.match(stderr, /exported 2 keys \(1 active, 1 revoked\) to .*keys\.json/);
    const file = parseDeveloperKeyFile(readFileSync(out, 'utf8'));
    assert.deepEqual(file.keys.map((k) => k.account_id), [accountId, accountId]);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left behind');
    await run(['--data-dir', dataDir, '--account', other, '--out', out]);
    assert.deepEqual(parseDeveloperKeyFile(readFileSync(out, 'utf8')).keys.map((k) => k.account_id), [other]);
  });

  it('refuses an unknown account and a data dir without a store, creating nothing', async () => {
    await assert.rejects(run(['--data-dir', dataDir, '--account', 'acct_nope']), (e: Error) => e instanceof UserError && /no account acct_nope/.test(e.message));
    const empty = join(dir, 'empty');
    await assert.rejects(run(['--data-dir', empty]), (e: Error) => e instanceof UserError && /no hosted store in/.test(e.message));
    assert.throws(() => statSync(empty), /ENOENT/);
  });
});

describe('svc admin keys export, as the real command', () => {
  it('is part of svc admin: one line and exit 2 for a data dir with no store, creating nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-keys-export-cli-'));
    try {
      const empty = join(dir, 'nothing-here');
      const { code, stdout, stderr } = await runCliToEnd(['admin', 'keys', 'export', '--data-dir', empty]);
      assert.equal(code, 2);
      assert.equal(stdout, '');
      assert.match(stderr, /no hosted store in/);
      assert.equal(stderr.trim().split('\n').length, 1);
      assert.throws(() => statSync(empty), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
