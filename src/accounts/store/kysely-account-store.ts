import type { Account, AccountStore } from '../account-store.ts';
import type { Plan } from '../plan.ts';
import { newId } from '../../shared/new-id.ts';
import type { AccountRow } from './hosted-database.ts';
import { maxActiveKeysColumn, planColumns, toAccount } from './account-rows.ts';
import { toMillijoules } from './energy-units.ts';
import type { StoreHandle } from './store-handle.ts';

/** Accounts and their lifecycle over Kysely, the same queries on SQLite and PostgreSQL. */
export class KyselyAccountStore implements AccountStore {
  readonly #db: StoreHandle['db'];

  constructor(handle: StoreHandle) {
    this.#db = handle.db;
  }

  async createAccount(input: { name: string; plan: Plan }): Promise<Account> {
    const row: AccountRow = {
      id: newId('acct_'),
      name: input.name,
      monthly_allowance_mj: toMillijoules(input.plan.monthlyJouleAllowance, 'monthlyJouleAllowance'),
      hosted_entitlement: input.plan.hostedEntitlement ? 1 : 0,
      enterprise: input.plan.enterprise ? 1 : 0,
      created_at: Date.now(),
      disabled_at: null,
      max_active_keys: input.plan.maxActiveKeys === undefined || input.plan.maxActiveKeys === null ? null : maxActiveKeysColumn(input.plan.maxActiveKeys),
    };
    await this.#db.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  async getAccount(accountId: string): Promise<Account | undefined> {
    const row = await this.#db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.#db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toAccount);
  }

  async setPlan(accountId: string, plan: Partial<Plan>): Promise<Account | undefined> {
    const columns = planColumns(plan);
    if (Object.keys(columns).length === 0) return this.getAccount(accountId);
    const row = await this.#db.updateTable('accounts').set(columns).where('id', '=', accountId).returningAll().executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  // Disabling and enabling (migration 0004).

  async disableAccount(accountId: string): Promise<Account | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.updateTable('accounts').set({ disabled_at: Date.now() }).where('id', '=', accountId).where('disabled_at', 'is', null).execute();
      const row = await trx.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
      if (row === undefined) return undefined;
      await trx.deleteFrom('sessions').where('account_id', '=', accountId).execute();
      await trx.deleteFrom('sign_in_tokens').where('account_id', '=', accountId).where('used_at', 'is', null).execute();
      return toAccount(row);
    });
  }

  async enableAccount(accountId: string): Promise<Account | undefined> {
    const row = await this.#db.updateTable('accounts').set({ disabled_at: null }).where('id', '=', accountId).returningAll().executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }
}
