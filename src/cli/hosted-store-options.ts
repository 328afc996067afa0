import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { HostedStore } from '../accounts/hosted-store.ts';
import { hostedDatabasePath } from '../accounts/developer-keys/open-developer-key-verifier.ts';
import { UserError } from '../shared/user-error.ts';

/** How `svc admin` commands find the store of `svc hosted`: its data dir, or the replicas' PostgreSQL. */
export interface StoreOptions {
  dataDir?: string;
  databaseUrl?: string;
}

export function storeOptions(command: Command): Command {
  return command
    .addOption(new Option('-d, --data-dir <dir>', 'the embedded store of `svc hosted` [default: ~/.svc/hosted]').env('SVC_HOSTED_DATA_DIR'))
    .addOption(new Option('--database-url <url>', 'the PostgreSQL store of `svc hosted` replicas').env('SVC_DATABASE_URL'));
}

/**
 * Opens the store, runs `run`, closes it. `mustExist`: refuse a data dir with no store in it
 * (reading from one that is not there would create an empty store and report nothing).
 */
export async function withStore<T>(options: StoreOptions, run: (store: HostedStore) => Promise<T>, { mustExist = false } = {}): Promise<T> {
  const { openHostedStore } = await import('../accounts/store/open-hosted-store.ts');
  const dataDir = resolve(options.dataDir ?? join(homedir(), '.svc', 'hosted'));
  const databaseUrl = options.databaseUrl === '' ? undefined : options.databaseUrl;
  if (mustExist && databaseUrl === undefined && !existsSync(hostedDatabasePath(dataDir))) {
    throw new UserError(`no hosted store in ${dataDir} (give the --data-dir of svc hosted, or --database-url)`, { exitCode: 2 });
  }
  let store: HostedStore;
  try {
    store = await openHostedStore({ dataDir, databaseUrl });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError(`cannot open the hosted store (${databaseUrl !== undefined ? 'the --database-url database' : dataDir}): ${reason}`, { cause: error });
  }
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}
