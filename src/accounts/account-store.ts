import type { Plan } from './plan.ts';

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  createdAt: Date;
  /** Set by `svc admin accounts disable`: its keys, sessions and sign-in links are refused until enabled. */
  disabledAt: Date | null;
}

/** The accounts themselves and their lifecycle: the admin CLI's side of the store. */
export interface AccountStore {
  createAccount(input: { name: string; plan: Plan }): Promise<Account>;
  getAccount(accountId: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  /** Undefined when there is no such account. */
  setPlan(accountId: string, plan: Partial<Plan>): Promise<Account | undefined>;
  /**
   * Disables an account: its keys are refused from the next request, and its sessions and unused
   * sign-in links are deleted, in one transaction. Disabling twice keeps the first time.
   * Undefined when there is no such account.
   */
  disableAccount(accountId: string): Promise<Account | undefined>;
  /** Lifts a disable: keys work again; ended sessions stay ended. Undefined when there is no such account. */
  enableAccount(accountId: string): Promise<Account | undefined>;
}
