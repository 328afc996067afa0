import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Allowance } from '../allowance.ts';
import type { StoreConnection, StoreKind } from '../store-connection.ts';
import type { HostedDatabase } from './hosted-database.ts';
import type { SqliteHotPath } from './sqlite-hot-path.ts';
import { LedgerWriterBusyError, LedgerWriterUnavailableError, type LedgerWriter } from './ledger-writer.ts';
import { allowanceOf } from './allowance-of.ts';
import { allowanceQuery, checkKeyQuery, insertLedgerQuery, touchQuery } from './hot-path-queries.ts';

export interface StoreHandleOptions {
  /** Runs after the database is closed (the SQLite store's checkpointer stops there). */
  onClose?: (() => Promise<void>) | undefined;
  /** The embedded store's own: its connection for the hot path's queries, and the ledger writer thread. */
  sqlite?: {
    hotPath: SqliteHotPath;
    /** Starts the thread that writes ledger rows and last_used_at (ledger-writer.ts), given their SQL. */
    openLedgerWriter?: ((statements: { insert: string; touch: string }) => LedgerWriter) | undefined;
  } | undefined;
}

/**
 * What the store's concerns (kysely-key-store.ts, kysely-ledger-store.ts, …) share: the Kysely
 * instance, the hot path's prepared queries, and the embedded store's direct connection and
 * writer thread. One per opened store; closing it closes them all.
 */
export class StoreHandle implements StoreConnection {
  readonly kind: StoreKind;
  readonly db: Kysely<HostedDatabase>;
  readonly checkKeyQuery: ReturnType<typeof checkKeyQuery>;
  readonly insertLedgerQuery: ReturnType<typeof insertLedgerQuery>;
  readonly touchQuery: ReturnType<typeof touchQuery>;
  readonly allowanceQuery: ReturnType<typeof allowanceQuery>;

  readonly #onClose: (() => Promise<void>) | undefined;
  readonly #hot: SqliteHotPath | undefined;
  readonly #ledgerWriter: LedgerWriter | undefined;

  constructor(db: Kysely<HostedDatabase>, kind: StoreKind, options: StoreHandleOptions = {}) {
    this.db = db;
    this.checkKeyQuery = checkKeyQuery(db);
    this.insertLedgerQuery = insertLedgerQuery(db);
    this.touchQuery = touchQuery(db);
    this.allowanceQuery = allowanceQuery(db);
    this.kind = kind;
    this.#onClose = options.onClose;
    this.#hot = options.sqlite?.hotPath;
    this.#ledgerWriter = options.sqlite?.openLedgerWriter?.({ insert: this.insertLedgerQuery.sql, touch: this.touchQuery.sql });
  }

  /** A compiled hot-path query: straight on node:sqlite where it can, through Kysely otherwise. */
  async rows<Row>(query: CompiledQuery<Row>): Promise<Row[]> {
    return this.#hot?.all(query) ?? (await this.db.executeQuery(query)).rows as Row[];
  }

  /**
   * A hot-path write; the rows it returned. The embedded store hands it to its writer thread,
   * except when the caller is `alone` and the thread idle (it then holds no lock): this
   * connection writes at once. It writes here too when the thread cannot (it failed), after
   * `alreadyStored` says the thread did not commit it before it went.
   */
  async write(statement: 'insert' | 'touch', query: CompiledQuery, options: { alone?: boolean; alreadyStored?: () => Promise<boolean> } = {}): Promise<number> {
    const writer = this.#ledgerWriter;
    if (writer?.available === true && !(options.alone === true && writer.idle)) {
      try {
        return await this.#writeOnThread(writer, statement, query.parameters as unknown[]);
      } catch (error) {
        if (!(error instanceof LedgerWriterUnavailableError)) throw error;
        if (await options.alreadyStored?.() === true) return 1;
      }
    }
    return (await this.rows(query)).length;
  }

  async #writeOnThread(writer: LedgerWriter, statement: 'insert' | 'touch', values: unknown[]): Promise<number> {
    try {
      return await writer.write(statement, values);
    } catch (error) {
      // Kept busy past busy_timeout (another process's long transaction): once more on the
      // thread, never here, where the same wait would hold the event loop.
      if (!(error instanceof LedgerWriterBusyError)) throw error;
      return writer.write(statement, values);
    }
  }

  /** An unknown account has no allowance (0 of 0), not an error: the caller checked the key already. */
  async allowanceFor(accountId: string, month: string): Promise<Allowance> {
    const row = (await this.rows(this.allowanceQuery.bind([month, accountId])))[0];
    const allowanceMj = row === undefined ? 0 : Number(row.monthly_allowance_mj);
    const usedMj = row?.used_mj === null || row?.used_mj === undefined ? 0 : Number(row.used_mj);
    return allowanceOf(month, allowanceMj, usedMj);
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#ledgerWriter?.stop();
    await this.db.destroy();
    await this.#onClose?.();
  }
}
