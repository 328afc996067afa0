import { DatabaseSync, type StatementSync } from 'node:sqlite';

/**
 * node:sqlite's database with prepared statements kept by their SQL. The Kysely dialect
 * prepares every query it runs, and compiling the statement was the largest single cost of an
 * authenticated, ledgered hosted request (about a sixth of the gateway's busy time in a CPU
 * profile); Kysely's SQL for one code path is always the same text, with values as parameters,
 * so a few dozen statements serve every request.
 *
 * Reusing a statement is safe here: the dialect runs one query at a time on its one connection,
 * and `all`/`run` reset the statement when they finish. The cache is bounded (least recently
 * used out) because `in (…)` lists of different lengths make different texts.
 */
export class CachingDatabase extends DatabaseSync {
  readonly #statements = new Map<string, StatementSync>();
  readonly #limit: number;

  constructor(path: string, limit = 256) {
    super(path);
    this.#limit = limit;
  }

  override prepare(sql: string): StatementSync {
    const cached = this.#statements.get(sql);
    if (cached !== undefined) {
      // Most recently used last, so the first key is the one to drop.
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const statement = super.prepare(sql);
    this.#statements.set(sql, statement);
    if (this.#statements.size > this.#limit) this.#statements.delete(this.#statements.keys().next().value!);
    return statement;
  }

  get cachedStatements(): number {
    return this.#statements.size;
  }
}
