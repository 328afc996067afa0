import { Option, type Command } from 'commander';
import type { Account, AccountStore } from '../accounts/account-store.ts';
import { MAX_ACTIVE_KEYS_LIMIT, maxActiveKeysOf, type Plan } from '../accounts/plan.ts';
import { AccountDisabledError } from '../accounts/store/account-disabled-error.ts';
import { ConfigError, parseDuration } from '../shared/config-values.ts';
import { UserError } from '../shared/user-error.ts';
import { DEFAULT_HOSTED_PORT } from './hosted-command.ts';
import { registerKeysExport } from './admin-keys-export.ts';
import { storeOptions, withStore, type StoreOptions } from './hosted-store-options.ts';

const MAX_ACCOUNT_NAME_CHARS = 200;
/** A sign-in link is for a person to click soon; a week is already generous. */
const MAX_LINK_TTL_MS = 7 * 24 * 3_600_000;

/** Joules: a plain non-negative number (no units: `mJ` and `MJ` differ only in case). */
export function parseJoules(value: string, what: string): number {
  const text = value.trim();
  const n = /^\d+(?:\.\d+)?(?:e\d+)?$/i.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(n) || n < 0 || n > Number.MAX_SAFE_INTEGER / 1000) throw new ConfigError(`${what}: '${value}' is not a number of Joules (try 1000000).`);
  return n;
}

function parseMonth(value: string): string {
  const match = /^(\d{4})-(\d{2})$/.exec(value.trim());
  if (match === null || Number(match[2]) < 1 || Number(match[2]) > 12) throw new ConfigError(`--month: '${value}' is not a month (YYYY-MM, e.g. 2026-03).`);
  return value.trim();
}

function parseBaseUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`--base-url: '${value}' must be the hosted server's http:// or https:// address, e.g. https://svc.example.com.`);
  }
  return url.href.replace(/\/+$/, '');
}

function parseTtl(value: string): number {
  const ms = parseDuration(value, '--ttl');
  if (!Number.isFinite(ms) || ms < 1000 || ms > MAX_LINK_TTL_MS) throw new ConfigError(`--ttl: '${value}' must be between 1s and 7d (168h), e.g. 15m.`);
  return ms;
}

/** `--max-keys`: a whole number of keys, or `default` for the plan's own default. */
function parseMaxKeys(value: string): number | null {
  const text = value.trim();
  if (text === 'default') return null;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n > MAX_ACTIVE_KEYS_LIMIT) throw new ConfigError(`--max-keys: '${value}' is not a number of keys from 0 to ${MAX_ACTIVE_KEYS_LIMIT}, or 'default'.`);
  return n;
}

async function requireAccount(store: Pick<AccountStore, 'getAccount'>, id: string): Promise<Account> {
  const account = await store.getAccount(id);
  if (account === undefined) throw new UserError(`no account '${id.slice(0, 80)}' (svc admin accounts list shows the ids)`);
  return account;
}

function accountJson(account: Account) {
  return {
    id: account.id,
    name: account.name,
    plan: {
      monthly_joule_allowance: account.plan.monthlyJouleAllowance, hosted_entitlement: account.plan.hostedEntitlement, enterprise: account.plan.enterprise,
      // The cap in force: the plan's own, or its default (max_active_keys_default says which).
      max_active_keys: maxActiveKeysOf(account.plan), max_active_keys_default: account.plan.maxActiveKeys === undefined || account.plan.maxActiveKeys === null,
    },
    created_at: account.createdAt.toISOString(),
    disabled_at: account.disabledAt?.toISOString() ?? null,
  };
}

function accountLine(account: Account): string {
  const { plan } = account;
  const disabled = account.disabledAt === null ? '' : `  DISABLED since ${account.disabledAt.toISOString()}`;
  return `${account.id}  ${JSON.stringify(account.name)}  allowance ${plan.monthlyJouleAllowance} J/month  entitlement ${plan.hostedEntitlement ? 'yes' : 'no'}  enterprise ${plan.enterprise ? 'yes' : 'no'}  max keys ${maxActiveKeysOf(plan)}${disabled}`;
}

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

/** `svc admin`: operators manage accounts, plans and sign-in links in the hosted store directly. */
export function registerAdminCommand(program: Command): void {
  const admin = program.command('admin').description('operate the hosted tier: accounts, plans, sessions, usage, sign-in links, developer-key export (opens its store directly)');
  const accounts = admin.command('accounts').description('create, list, disable and enable accounts');

  storeOptions(accounts.command('create').description('create an account'))
    .requiredOption('--name <name>', 'the account name')
    .option('--allowance <joules>', 'monthly Joule allowance [default: 0]')
    .option('--entitlement', 'paid hosted-compute entitlement (supercomputer keys, hosted chat)')
    .option('--enterprise', 'enterprise plan (the /v1 fleet API, enterprise policies)')
    .option('--max-keys <n>', 'most unrevoked keys the account may issue itself [default: 10 free, 100 entitled, 1000 enterprise]')
    .option('--json', 'print JSON')
    .action(async (options: StoreOptions & { name: string; allowance?: string; entitlement?: boolean; enterprise?: boolean; maxKeys?: string; json?: boolean }) => {
      const name = options.name.trim();
      if (name === '' || name.length > MAX_ACCOUNT_NAME_CHARS) throw new ConfigError(`--name: give a name of 1 to ${MAX_ACCOUNT_NAME_CHARS} characters.`);
      const plan: Plan = {
        monthlyJouleAllowance: options.allowance === undefined ? 0 : parseJoules(options.allowance, '--allowance'),
        hostedEntitlement: options.entitlement === true,
        enterprise: options.enterprise === true,
        maxActiveKeys: options.maxKeys === undefined ? null : parseMaxKeys(options.maxKeys),
      };
      const account = await withStore(options, (store) => store.createAccount({ name, plan }));
      print(options.json, accountJson(account), accountLine(account));
    });

  storeOptions(accounts.command('list').description('list accounts'))
    .option('--json', 'print JSON')
    .action(async (options: StoreOptions & { json?: boolean }) => {
      const list = await withStore(options, (store) => store.listAccounts());
      print(options.json, { data: list.map(accountJson) }, list.length === 0 ? 'no accounts (create one with svc admin accounts create --name N)' : list.map(accountLine).join('\n'));
    });

  storeOptions(admin.command('plan').description('change plans').command('set').argument('<account>', 'account id').description("change an account's plan"))
    .option('--allowance <joules>', 'monthly Joule allowance')
    .addOption(new Option('--entitlement', 'grant the paid hosted-compute entitlement'))
    .addOption(new Option('--no-entitlement', 'withdraw it'))
    .addOption(new Option('--enterprise', 'put the account on the enterprise plan'))
    .addOption(new Option('--no-enterprise', 'take it off'))
    .option('--max-keys <n|default>', "most unrevoked keys the account may issue itself; 'default' for the plan's default")
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { allowance?: string; entitlement?: boolean; enterprise?: boolean; maxKeys?: string; json?: boolean }) => {
      const change: Partial<Plan> = {};
      if (options.allowance !== undefined) change.monthlyJouleAllowance = parseJoules(options.allowance, '--allowance');
      if (options.entitlement !== undefined) change.hostedEntitlement = options.entitlement;
      if (options.enterprise !== undefined) change.enterprise = options.enterprise;
      if (options.maxKeys !== undefined) change.maxActiveKeys = parseMaxKeys(options.maxKeys);
      if (Object.keys(change).length === 0) throw new ConfigError('plan set: say what to change (--allowance, --entitlement/--no-entitlement, --enterprise/--no-enterprise, --max-keys).');
      const account = await withStore(options, async (store) => {
        await requireAccount(store, id);
        return (await store.setPlan(id, change)) ?? requireAccount(store, id);
      });
      print(options.json, accountJson(account), accountLine(account));
    });

  storeOptions(admin.command('usage').argument('<account>', 'account id').description("an account's Joules for a month: allowance, used, daily, per project"))
    .option('--month <YYYY-MM>', 'the month (UTC) [default: this month]')
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { month?: string; json?: boolean }) => {
      const month = options.month === undefined ? undefined : parseMonth(options.month);
      const { account, report, total } = await withStore(options, async (store) => {
        const found = await requireAccount(store, id);
        // The report is per key too; no key is asked about here, so only its account-wide parts are shown.
        const usage = await store.usage({ accountId: id, keyId: '', month, evidenceLimit: 0 });
        return { account: found, report: usage, total: await store.ledgerTotal(id, usage.month) };
      });
      const { allowance } = report;
      const json = {
        account: account.id,
        month: report.month,
        allowance_joules: allowance.allowanceJoules,
        used_joules: allowance.usedJoules,
        remaining_joules: allowance.remainingJoules,
        requests: total.rows,
        ledger_joules: total.joules,
        daily: report.daily,
        projects: report.projects.map((p) => ({ project: p.projectId, requests: p.requests, joules: p.joules })),
      };
      const lines = [
        `${account.id} ${JSON.stringify(account.name)}  ${report.month}: used ${allowance.usedJoules} J of ${allowance.allowanceJoules} J (${allowance.remainingJoules} J left), ${total.rows} requests`,
        ...report.daily.map((d) => `  ${d.date}  ${d.joules} J  ${d.requests} requests`),
        ...report.projects.map((p) => `  project ${p.projectId}  ${p.joules} J  ${p.requests} requests`),
      ];
      print(options.json, json, lines.join('\n'));
    });

  storeOptions(admin.command('sign-in-link').argument('<account>', 'account id').description('a one-time sign-in link for the account (prints it)'))
    .option('--base-url <url>', `the hosted server's address [default: http://127.0.0.1:${DEFAULT_HOSTED_PORT}]`)
    .option('--ttl <duration>', 'how long the link stays valid [default: 15m]')
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { baseUrl?: string; ttl?: string; json?: boolean }) => {
      const base = parseBaseUrl(options.baseUrl ?? `http://127.0.0.1:${DEFAULT_HOSTED_PORT}`);
      const ttlMs = parseTtl(options.ttl ?? '15m');
      const { token, expiresAt } = await withStore(options, async (store) => {
        await requireAccount(store, id);
        try {
          return await store.createSignInToken(id, ttlMs);
        } catch (error) {
          if (error instanceof AccountDisabledError) throw new UserError(`account '${id.slice(0, 80)}' is disabled: it cannot sign in (svc admin accounts enable ${id.slice(0, 80)})`);
          throw error;
        }
      });
      const link = `${base}/api/session/sign-in?token=${token}`;
      print(options.json, { account: id, link, expires_at: expiresAt.toISOString() }, link);
    });
  registerLifecycle(admin, accounts);
  registerKeysExport(admin);
}

/** `accounts disable|enable` and `sessions revoke`: operators cut an account's access and restore it. */
function registerLifecycle(admin: Command, accounts: Command): void {
  storeOptions(accounts.command('disable').argument('<account>', 'account id').description('refuse its keys, end its sessions and sign-in links, until enabled'))
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { json?: boolean }) => {
      const account = await withStore(options, async (store) => (await store.disableAccount(id)) ?? requireAccount(store, id));
      print(options.json, accountJson(account), accountLine(account));
    });

  storeOptions(accounts.command('enable').argument('<account>', 'account id').description('accept its keys again (ended sessions stay ended)'))
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { json?: boolean }) => {
      const account = await withStore(options, async (store) => (await store.enableAccount(id)) ?? requireAccount(store, id));
      print(options.json, accountJson(account), accountLine(account));
    });

  storeOptions(admin.command('sessions').description("end accounts' sign-in sessions").command('revoke').argument('<account>', 'account id').description('end every sign-in session of the account and void its unused sign-in links'))
    .option('--json', 'print JSON')
    .action(async (id: string, options: StoreOptions & { json?: boolean }) => {
      const ended = await withStore(options, async (store) => {
        await requireAccount(store, id);
        return store.revokeSessions(id);
      });
      print(options.json, { account: id, sessions_ended: ended.sessions, sign_in_links_voided: ended.signInLinks }, `${id}: ended ${ended.sessions} session(s), voided ${ended.signInLinks} unused sign-in link(s)`);
    });
}
