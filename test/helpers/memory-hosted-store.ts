/**
 * A tiny in-memory HostedStore for the HTTP tests of the hosted app: accounts and keys only,
 * the parts the key check needs. The real stores (SQLite, PostgreSQL) replace it at merge; the
 * methods this helper does not keep say so when called.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Account, ApiKeyRecord, HostedStore, IssuedKey, KeyCheck, KeyHash, KeyScope, Plan } from '../../src/hosted/hosted-store.ts';

const hash = (secret: string): Buffer => createHash('sha256').update(secret).digest();

export class MemoryHostedStore implements HostedStore {
  readonly kind = 'sqlite' as const;
  readonly #accounts = new Map<string, Account>();
  readonly #keys = new Map<string, { record: ApiKeyRecord; hash: Buffer }>();

  async createAccount(input: { name: string; plan: Plan }): Promise<Account> {
    const account: Account = { id: `acct_${randomUUID()}`, name: input.name, plan: { ...input.plan }, createdAt: new Date() };
    this.#accounts.set(account.id, account);
    return account;
  }
  async getAccount(accountId: string): Promise<Account | undefined> {
    return this.#accounts.get(accountId);
  }
  async listAccounts(): Promise<Account[]> {
    return [...this.#accounts.values()];
  }
  async setPlan(accountId: string, plan: Partial<Plan>): Promise<Account | undefined> {
    const account = this.#accounts.get(accountId);
    if (account !== undefined) account.plan = { ...account.plan, ...plan };
    return account;
  }
  async issueKey(accountId: string, input: { scope: KeyScope; name?: string | null; project?: string | null }): Promise<IssuedKey> {
    const secret = `svc_sk_${randomBytes(24).toString('base64url')}`;
    const record: ApiKeyRecord = {
      id: `key_${randomUUID()}`, accountId, scope: input.scope, name: input.name ?? null, project: input.project ?? null,
      prefix: secret.slice(0, 11), lastFour: secret.slice(-4), createdAt: new Date(), lastUsedAt: null, revokedAt: null,
    };
    this.#keys.set(record.id, { record, hash: hash(secret) });
    return { key: record, secret };
  }
  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return [...this.#keys.values()].filter((k) => k.record.accountId === accountId).map((k) => k.record);
  }
  async listKeyHashes(accountId?: string): Promise<KeyHash[]> {
    return [...this.#keys.values()]
      .filter((k) => accountId === undefined || k.record.accountId === accountId)
      .map((k) => ({ key: k.record, secretSha256: k.hash.toString('hex') }));
  }
  async revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    const entry = this.#keys.get(keyId);
    if (entry === undefined || entry.record.accountId !== accountId) return undefined;
    entry.record.revokedAt ??= new Date();
    return entry.record;
  }
  async checkKey(secret: string): Promise<KeyCheck> {
    const presented = hash(secret);
    for (const { record, hash: stored } of this.#keys.values()) {
      if (!timingSafeEqual(stored, presented)) continue;
      if (record.revokedAt !== null) return { status: 'revoked', key: record };
      const account = this.#accounts.get(record.accountId);
      return account === undefined ? { status: 'unknown' } : { status: 'valid', key: record, account };
    }
    return { status: 'unknown' };
  }
  async ping(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}

  #notKept(what: string): never {
    throw new Error(`MemoryHostedStore keeps no ${what}`);
  }
  createSignInToken(): never { return this.#notKept('sign-in tokens'); }
  redeemSignInToken(): never { return this.#notKept('sign-in tokens'); }
  checkSession(): never { return this.#notKept('sessions'); }
  endSession(): never { return this.#notKept('sessions'); }
  allowance(): never { return this.#notKept('ledger'); }
  recordCharge(): never { return this.#notKept('ledger'); }
  findEvidence(): never { return this.#notKept('ledger'); }
  findByIdempotencyKey(): never { return this.#notKept('ledger'); }
  usage(): never { return this.#notKept('ledger'); }
  ledgerTotal(): never { return this.#notKept('ledger'); }
}
