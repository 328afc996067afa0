/**
 * The two hosted stores as tests open them: embedded SQLite in a temporary data dir, and the
 * machine's PostgreSQL in a fresh schema that is dropped afterwards. Suites loop over
 * `hostedStoreKinds` so one suite runs against both, skipping the PostgreSQL half (and saying so)
 * where the machine has no PostgreSQL (test-services.ts).
 */
import type { TestContext } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from './test-services.ts';

export interface HostedStoreFixture {
  kind: 'sqlite' | 'postgres';
  /** The options openHostedStore was given: open another instance on the same data. */
  options: { dataDir: string; databaseUrl?: string | undefined; schema?: string | undefined };
  /** The open store (a test that reopens it puts the new instance here, for cleanup). */
  store: HostedStore;
  /** Reads the store's tables directly, past the interface (what is really stored). */
  raw(query: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Closes the store and deletes everything it wrote. */
  cleanup(): Promise<void>;
}

async function openSqliteFixture(): Promise<HostedStoreFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-hosted-store-'));
  const options = { dataDir };
  const fixture: HostedStoreFixture = {
    kind: 'sqlite',
    options,
    store: await openHostedStore(options),
    raw(query, params = []) {
      // Writable: a test may corrupt a row to show the store copes (the store's own connection stays open beside it).
      const db = new DatabaseSync(join(dataDir, 'hosted', 'hosted.db'));
      try {
        return Promise.resolve(db.prepare(query).all(...(params as never[])) as Record<string, unknown>[]);
      } finally {
        db.close();
      }
    },
    async cleanup() {
      await fixture.store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

async function openPostgresFixture(): Promise<HostedStoreFixture> {
  const schema = `t_store_${randomBytes(6).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-hosted-store-'));
  const options = { dataDir, databaseUrl: TEST_DATABASE_URL, schema };
  const store = await openHostedStore(options);
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  const fixture: HostedStoreFixture = {
    kind: 'postgres',
    options,
    store,
    async raw(query, params = []) {
      // pg numbers its placeholders; the SQLite spelling `?` is rewritten so one query serves both.
      let n = 0;
      const result = await client.query(query.replace(/\?/g, () => `$${++n}`), params);
      return result.rows as Record<string, unknown>[];
    },
    async cleanup() {
      await fixture.store.close();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** `unavailable(what)`: false when the store can be opened here, else why `what` is skipped (node:test's `skip`). */
export const hostedStoreKinds: { kind: 'sqlite' | 'postgres'; open: () => Promise<HostedStoreFixture>; unavailable: (what: string) => Promise<string | false> }[] = [
  { kind: 'sqlite', open: openSqliteFixture, unavailable: () => Promise.resolve(false) },
  { kind: 'postgres', open: openPostgresFixture, unavailable: postgresUnavailable },
];

/** A fresh PostgreSQL schema name and a function that drops it (for tests that open stores themselves). */
export function freshPostgresSchema(): { schema: string; drop: () => Promise<void> } {
  const schema = `t_store_${randomBytes(6).toString('hex')}`;
  return {
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A data dir whose embedded store already has an entitled account with a supercomputer key (WAL: the test reads it while svc hosted runs). */
export async function prepareHostedDataDir(t: TestContext, name = 'engine'): Promise<{ dataDir: string; store: HostedStore; accountId: string; secret: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `svc-hosted-${name}-`));
  const store = await openHostedStore({ dataDir });
  t.after(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const account = await store.createAccount({ name, plan: { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
  return { dataDir, store, accountId: account.id, secret };
}
