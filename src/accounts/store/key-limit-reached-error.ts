/** issueKeyWithinCap: the account already holds as many unrevoked keys as its plan allows. */
export class KeyLimitReachedError extends Error {
  readonly accountId: string;
  /** The plan's cap on unrevoked keys. */
  readonly maxActiveKeys: number;

  constructor(accountId: string, maxActiveKeys: number) {
    super(`account ${accountId} already has ${maxActiveKeys} active keys, its plan's cap`);
    this.name = 'KeyLimitReachedError';
    this.accountId = accountId;
    this.maxActiveKeys = maxActiveKeys;
  }
}
