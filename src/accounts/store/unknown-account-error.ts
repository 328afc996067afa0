/** A store call named an account that does not exist (the caller maps it to its own 4xx). */
export class UnknownAccountError extends Error {
  readonly accountId: string;

  constructor(accountId: string) {
    super(`no account ${accountId}`);
    this.name = 'UnknownAccountError';
    this.accountId = accountId;
  }
}
