/** A store call needs a live account and this one is disabled (`svc admin accounts disable`). */
export class AccountDisabledError extends Error {
  readonly accountId: string;

  constructor(accountId: string) {
    super(`account ${accountId} is disabled`);
    this.name = 'AccountDisabledError';
    this.accountId = accountId;
  }
}
