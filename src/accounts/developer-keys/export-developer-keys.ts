import type { AccountStore } from '../account-store.ts';
import type { KeyStore } from '../key-store.ts';
import { DEVELOPER_KEY_FILE_FORMAT, DEVELOPER_KEY_FILE_VERSION, type DeveloperKeyFile } from './developer-key-file.ts';

/**
 * The developer-key file for one account's keys, or every account's: hashes and metadata, so
 * the file can be copied to a developer machine without handing over any secret. Revoked keys
 * stay in it, so the daemon answers "revoked" rather than "unknown" for them. Keys of a disabled
 * account are left out (the daemon refuses them as not valid, as the store's verifier does); an
 * account enabled again needs a new export.
 */
export async function exportDeveloperKeys(store: Pick<AccountStore, 'getAccount' | 'listAccounts'> & Pick<KeyStore, 'listKeyHashes'>, accountId?: string, now: Date = new Date()): Promise<DeveloperKeyFile> {
  const accounts = accountId === undefined ? await store.listAccounts() : [await store.getAccount(accountId)];
  const disabled = new Set(accounts.flatMap((a) => (a !== undefined && a.disabledAt !== null ? [a.id] : [])));
  const keys = (await store.listKeyHashes(accountId)).filter(({ key }) => !disabled.has(key.accountId));
  return {
    format: DEVELOPER_KEY_FILE_FORMAT,
    version: DEVELOPER_KEY_FILE_VERSION,
    exported_at: now.toISOString(),
    keys: keys.map(({ key, secretSha256 }) => ({
      id: key.id,
      account_id: key.accountId,
      scope: key.scope,
      project: key.project,
      name: key.name,
      secret_sha256: secretSha256,
      revoked_at: key.revokedAt === null ? null : key.revokedAt.toISOString(),
    })),
  };
}
