import type { HostedStore } from '../hosted-store.ts';

/** Stub until part S's store lands at merge (SQLite in the data dir, or PostgreSQL). */
export function openHostedStore(_options: { dataDir: string; databaseUrl?: string | undefined; schema?: string | undefined }): Promise<HostedStore> {
  throw new Error('hosted store: not yet');
}
