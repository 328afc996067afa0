import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openHostedStore } from '../store/open-hosted-store.ts';
import type { DeveloperKeyVerifier } from './developer-key-verifier.ts';
import { DeveloperKeyFileError, FileKeyVerifier } from './file-key-verifier.ts';
import { StoreKeyVerifier } from './store-key-verifier.ts';

export const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** Where the embedded hosted store keeps its database under a `svc hosted --data-dir`. */
export function hostedDatabasePath(dataDir: string): string {
  return join(dataDir, 'hosted', 'hosted.db');
}

/**
 * `--developer-keys` → a verifier: a `postgres://` URL or a `svc hosted` data dir opens the
 * hosted store; any other path is an exported key file. Throws DeveloperKeyFileError with a
 * one-line message when the source cannot be used, so the daemon does not start half-guarded.
 * A data dir without a store is refused rather than given a new, empty one (a typo would
 * otherwise turn every key into "unknown").
 */
export async function openDeveloperKeyVerifier(source: string, options: { onWarning?: (message: string) => void } = {}): Promise<DeveloperKeyVerifier> {
  if (POSTGRES_URL.test(source)) {
    return openStore(() => openHostedStore({ dataDir: '', databaseUrl: source }), 'the PostgreSQL hosted store', options);
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(source).isDirectory();
  } catch {
    throw new DeveloperKeyFileError(`developer keys: ${source}: no such file or directory (give an exported key file, a svc hosted data dir, or a postgres:// URL)`);
  }
  if (!isDirectory) return new FileKeyVerifier(source, options);
  if (!existsSync(hostedDatabasePath(source))) {
    throw new DeveloperKeyFileError(`developer keys: ${source} is a directory without a hosted store (expected ${hostedDatabasePath(source)}; give the --data-dir of svc hosted)`);
  }
  return openStore(() => openHostedStore({ dataDir: source }), source, options);
}

async function openStore(
  open: () => ReturnType<typeof openHostedStore>,
  what: string,
  options: { onWarning?: (message: string) => void },
): Promise<DeveloperKeyVerifier> {
  let verifier: StoreKeyVerifier;
  try {
    verifier = new StoreKeyVerifier(await open(), options);
  } catch (error) {
    throw new DeveloperKeyFileError(`developer keys: cannot open ${what} (${(error as Error).message})`);
  }
  try {
    await verifier.refreshCount();
  } catch (error) {
    await verifier.close();
    throw new DeveloperKeyFileError(`developer keys: cannot read keys from ${what} (${(error as Error).message})`);
  }
  return verifier;
}
