import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { CompiledQuery } from 'kysely';

/**
 * The embedded store's hot path: a compiled query run straight on node:sqlite.
 *
 * Kysely's executor wraps each query in its connection mutex, plugin transforms and a chain of
 * promises; for the two queries every hosted chat request makes, that cost as much again as
 * SQLite's own work (a CPU profile of the gateway put the store at a fifth of a request). node:sqlite
 * is synchronous, so there is nothing to wait for: outside a transaction, a statement run here
 * cannot interleave with one Kysely runs on the same connection. Inside one (Kysely's
 * transaction holds the connection across awaits), running here would join a transaction that
 * is not ours, so `all` declines and the caller goes through Kysely, which waits its turn.
 */
export class SqliteHotPath {
  readonly #db: DatabaseSync;
  /**
   * Each SQL text's compiled statement, kept: compiling one (`prepare`) cost as much as running
   * it for the hot path's short queries. Their texts are the few prepared queries of the store,
   * so the cache stays small; it is bounded all the same.
   */
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** The query's rows, or undefined while a transaction is open on the connection (use Kysely then). */
  all<Row>(query: CompiledQuery<Row>): Row[] | undefined {
    if (this.#db.isTransaction) return undefined;
    let statement = this.#statements.get(query.sql);
    if (statement === undefined) {
      if (this.#statements.size >= MAX_CACHED_STATEMENTS) this.#statements.clear();
      statement = this.#db.prepare(query.sql);
      this.#statements.set(query.sql, statement);
    }
    return statement.all(...(query.parameters as never[])) as Row[];
  }
}

const MAX_CACHED_STATEMENTS = 64;
