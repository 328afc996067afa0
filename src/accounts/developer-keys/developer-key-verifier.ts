import type { KeyScope } from '../key-store.ts';

/** Who a developer key says the caller is. Never the secret. */
export interface DeveloperKeyIdentity {
  keyId: string;
  accountId: string;
  /** The project the key was issued for, if any (a request's `x-svc-project-id` may override it). */
  project: string | null;
  scope: KeyScope;
}

export type DeveloperKeyVerification =
  | ({ status: 'valid' } & DeveloperKeyIdentity)
  | { status: 'revoked' }
  | { status: 'unknown' };

/**
 * Checks developer keys for the local daemon: against the hosted store itself, or against a
 * file exported from it (hashes only), so a machine can check keys with no connection at all.
 */
export interface DeveloperKeyVerifier {
  readonly source: 'file' | 'store';
  /** Anything that is not a well-formed key secret is `unknown`; never throws for bad input. */
  verify(secret: string): Promise<DeveloperKeyVerification>;
  /** Keys that would verify now (not revoked), as last known; for `/health`. */
  keyCount(): number;
  close(): Promise<void>;
}
