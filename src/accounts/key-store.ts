import type { Account } from './account-store.ts';
import type { Allowance } from './allowance.ts';

/** `developer_runtime`: free identity key; `supercomputer`: needs a paid hosted entitlement. */
export type KeyScope = 'developer_runtime' | 'supercomputer';

/** Key metadata: everything but the secret, which is shown once at issue and kept only as a hash. */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  scope: KeyScope;
  name: string | null;
  project: string | null;
  /** The secret's recognizable start (e.g. `svc_sk_AbC1`), for people to tell keys apart. */
  prefix: string;
  lastFour: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface IssuedKey {
  key: ApiKeyRecord;
  /** The whole secret: returned once, never stored. */
  secret: string;
}

/** A key's metadata with its secret's SHA-256 (hex): what an exported developer-key file carries. */
export interface KeyHash {
  key: ApiKeyRecord;
  secretSha256: string;
}

export type KeyCheck =
  /** `allowance`: the account's current month, read in the same query (so a hosted request needs no second read). */
  | { status: 'valid'; key: ApiKeyRecord; account: Account; allowance: Allowance }
  | { status: 'revoked'; key: ApiKeyRecord }
  /** The key is live but its account is disabled (`svc admin accounts disable`). */
  | { status: 'account_disabled'; key: ApiKeyRecord; account: Account }
  | { status: 'unknown' };

/** What a new key is issued with. */
export interface NewKey {
  scope: KeyScope;
  name?: string | null | undefined;
  project?: string | null | undefined;
}

/** API keys: issued, listed, revoked, exported as hashes, and checked on every keyed request. */
export interface KeyStore {
  /** Entitlement is the caller's check (it owns the error); the store issues what it is asked. */
  issueKey(accountId: string, input: NewKey): Promise<IssuedKey>;
  /**
   * Like issueKey, for self-service issuing: refuses with KeyLimitReachedError when the account
   * already holds its plan's `maxActiveKeys` unrevoked keys. The count and the insert are one
   * atomic step, so concurrent calls (on any replica) never pass the cap together.
   */
  issueKeyWithinCap(accountId: string, input: NewKey): Promise<IssuedKey>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Undefined when the key is not this account's (or does not exist): no account touches another's keys. */
  revokeKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Every key (revoked ones too) with its secret's hash, of one account or of all: for the
   * developer-key export only (hashes of 256-bit secrets, never the secrets). Oldest first.
   */
  listKeyHashes(accountId?: string): Promise<KeyHash[]>;
  /** Hashes the presented secret and compares in constant time; records last use (coarsely). */
  checkKey(secret: string): Promise<KeyCheck>;
}
