import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { checkStoreVersion, migrateStore, type StoreLocation, type StoreMigrationStep } from './store-version.ts';

/**
 * What svc's node:sqlite stores share (spaces.db, responses.db): the schema version kept in
 * `PRAGMA user_version` under store-version.ts's rule, and the write transaction.
 */

/** Runs `fn` in one write transaction (BEGIN IMMEDIATE): all of it commits or none of it does. `fn` must not be async. */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    if (result instanceof Promise) throw new TypeError('sqlite store: a transaction body must be synchronous');
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** The version PRAGMA user_version records (0 in a new file). */
function userVersion(db: DatabaseSync): number {
  return Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
}

/** The file's schema version; StoreVersionError when a newer svc wrote it (check before any pragma that writes). */
export function checkSqliteVersion(db: DatabaseSync, where: StoreLocation, steps: readonly StoreMigrationStep[]): number {
  return checkStoreVersion(where, userVersion(db), steps.length);
}

/**
 * Brings the file up to the newest schema (`steps`, one per version), or refuses (before any
 * write) one a newer svc wrote. Read first without a transaction, so a current file is not
 * written; then again under the write lock, as another process may have migrated it meanwhile.
 */
export function migrateSqliteStore(db: DatabaseSync, where: StoreLocation, steps: readonly StoreMigrationStep[]): void {
  if (checkSqliteVersion(db, where, steps) === steps.length) return;
  transaction(db, () => migrateStore(where, userVersion(db), steps, (version) => db.exec(`PRAGMA user_version = ${version}`)));
}

/**
 * A store's prepared statements, kept by their SQL text: a store runs a fixed set of statements,
 * so each is compiled once for the life of its connection. Cleared when the connection closes.
 */
export class StatementCache {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Forgets the statements whose SQL names `text` (a table just dropped: they cannot run again). */
  forgetMentioning(text: string): void {
    for (const sql of this.#statements.keys()) if (sql.includes(text)) this.#statements.delete(sql);
  }

  clear(): void {
    this.#statements.clear();
  }
}
