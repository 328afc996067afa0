import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { preparePrivateDatabase } from '../shared/private-files.ts';
import { StatementCache, transaction } from '../shared/sqlite-store.ts';
import { checkResponsesVersion, migrateResponses } from './response-store-schema.ts';

/** Rows one eviction pass deletes before it yields to the event loop. */
const EVICTION_BATCH = 256;
/** How often expired responses are swept while the daemon runs (also at open and on each save). */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export interface ResponseStoreLimits {
  /** A response older than this (ms since it was created) is deleted. */
  retentionMs: number;
  /** The stored responses' total size (their JSON, in bytes) at most; the oldest are deleted first past it. */
  maxBytes: number;
  /** The clock, for tests (ms since the epoch). */
  now?: () => number;
}

/** A stored item: a JSON object with its `id`. */
export type StoredItem = { id: string } & Record<string, unknown>;

export interface StoredResponse {
  id: string;
  previousId: string | null;
  /** The Response object as answered (with its `output` items). */
  response: Record<string, unknown>;
  /** The input items it was sent, each with an id, in order. */
  inputItems: readonly StoredItem[];
}

/** One link of a chain: a response's input items and its Response object. */
export interface ChainLink {
  id: string;
  inputItems: StoredItem[];
  response: Record<string, unknown>;
}

/** A chain, oldest first; or the id of the first link that is gone (evicted, deleted, never stored). */
export type Chain = { found: true; links: ChainLink[] } | { found: false; missing: string; tooLarge?: false } | { found: false; tooLarge: true; missing?: undefined };

export interface ItemPage {
  object: 'list';
  data: StoredItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface ItemPageQuery {
  order: 'asc' | 'desc';
  /** An item id of this response: the page starts after it (in `order`). */
  after?: string | undefined;
  limit: number;
}

/**
 * Responses kept for `store: true` (OpenAI's stateful Responses): one SQLite file, private to
 * the user (0600 in a 0700 folder), with the schema-version rule of every data-dir store. Bounded
 * twice: a response older than the retention is deleted (at open, hourly, and on each save), and
 * past the size cap the oldest are deleted until the rest fit. Every call is a few small prepared
 * statements; the largest work, reading a whole chain, is bounded by `maxChars` of its caller.
 */
export class ResponseStore {
  readonly #db: DatabaseSync;
  readonly #statements: StatementCache;
  readonly #limits: Required<ResponseStoreLimits>;
  readonly #timer: NodeJS.Timeout;
  #bytes: number;
  #sweeping = false;

  private constructor(db: DatabaseSync, limits: Required<ResponseStoreLimits>) {
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#limits = limits;
    this.#bytes = Number((this.#prepare('SELECT COALESCE(SUM(bytes), 0) AS total FROM responses').get() as { total: number }).total);
    this.#timer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  /** `<data-dir>/responses/responses.db`. */
  static pathIn(dataDir: string): string {
    return join(dataDir, 'responses', 'responses.db');
  }

  /** Opens (creating if needed) the store at `path`; StoreVersionError for a file a newer svc wrote. */
  static open(path: string, limits: ResponseStoreLimits): ResponseStore {
    preparePrivateDatabase(path);
    const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
    try {
      checkResponsesVersion(db, path);
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
      migrateResponses(db, path);
    } catch (error) {
      db.close();
      throw error;
    }
    const store = new ResponseStore(db, { now: Date.now, ...limits });
    store.sweep();
    return store;
  }

  close(): void {
    clearInterval(this.#timer);
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  #prepare(sql: string): StatementSync {
    return this.#statements.prepare(sql);
  }

  /** The stored responses' total size in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Keeps a response; then the store is brought back under its limits. A response larger than
   * the whole cap alone is not kept (returns false): retrieving it answers 404.
   */
  save(record: StoredResponse): boolean {
    const response = JSON.stringify(record.response);
    const items = record.inputItems.map((item) => JSON.stringify(item));
    const bytes = Buffer.byteLength(response) + items.reduce((n, item) => n + Buffer.byteLength(item), 0);
    if (bytes > this.#limits.maxBytes) return false;
    transaction(this.#db, () => {
      this.#prepare('INSERT INTO responses (id, previous_id, created_at, bytes, response) VALUES (?, ?, ?, ?, ?)')
        .run(record.id, record.previousId, this.#limits.now(), bytes, response);
      const insert = this.#prepare('INSERT INTO response_items (response_id, position, id, item) VALUES (?, ?, ?, ?)');
      for (const [i, item] of items.entries()) insert.run(record.id, i, record.inputItems[i]!.id, item);
    });
    this.#bytes += bytes;
    this.sweep();
    return true;
  }

  /** The Response object, or undefined when it is not stored (never was, deleted or evicted). */
  get(id: string): Record<string, unknown> | undefined {
    const row = this.#prepare('SELECT response FROM responses WHERE id = ?').get(id) as { response: string } | undefined;
    return row === undefined ? undefined : JSON.parse(row.response) as Record<string, unknown>;
  }

  /** Deletes a response and its items; false when it was not stored. Its continuations stay, but can no longer be continued. */
  delete(id: string): boolean {
    const row = this.#prepare('DELETE FROM responses WHERE id = ? RETURNING bytes').get(id) as { bytes: number } | undefined;
    if (row === undefined) return false;
    this.#bytes -= row.bytes;
    return true;
  }

  /** A page of a response's input items (OpenAI's list shape); undefined when the response is not stored, or `after` is not one of its items. */
  inputItems(id: string, query: ItemPageQuery): ItemPage | undefined | 'unknown_after' {
    if (this.#prepare('SELECT 1 AS found FROM responses WHERE id = ?').get(id) === undefined) return undefined;
    let from: number;
    if (query.after === undefined) from = query.order === 'asc' ? -1 : Number.MAX_SAFE_INTEGER;
    else {
      const row = this.#prepare('SELECT position FROM response_items WHERE response_id = ? AND id = ?').get(id, query.after) as { position: number } | undefined;
      if (row === undefined) return 'unknown_after';
      from = row.position;
    }
    const sql = query.order === 'asc'
      ? 'SELECT item FROM response_items WHERE response_id = ? AND position > ? ORDER BY position ASC LIMIT ?'
      : 'SELECT item FROM response_items WHERE response_id = ? AND position < ? ORDER BY position DESC LIMIT ?';
    const rows = this.#prepare(sql).all(id, from, query.limit + 1) as { item: string }[];
    const data = rows.slice(0, query.limit).map((row) => JSON.parse(row.item) as StoredItem);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > query.limit };
  }

  /**
   * The chain that ends at `id`, oldest first: each link's input items and Response object. Not
   * found when any link is gone; too large past `maxChars` of stored JSON (read no further).
   */
  chain(id: string, maxChars: number): Chain {
    const links: ChainLink[] = [];
    const seen = new Set<string>();
    let chars = 0;
    for (let next: string | null = id; next !== null; ) {
      if (seen.has(next)) break;
      seen.add(next);
      const row = this.#prepare('SELECT previous_id, response, bytes FROM responses WHERE id = ?').get(next) as { previous_id: string | null; response: string; bytes: number } | undefined;
      if (row === undefined) return { found: false, missing: next };
      chars += row.bytes;
      if (chars > maxChars) return { found: false, tooLarge: true };
      const items = this.#prepare('SELECT item FROM response_items WHERE response_id = ? ORDER BY position').all(next) as { item: string }[];
      links.push({ id: next, inputItems: items.map((r) => JSON.parse(r.item) as StoredItem), response: JSON.parse(row.response) as Record<string, unknown> });
      next = row.previous_id;
    }
    return { found: true, links: links.reverse() };
  }

  /**
   * Deletes what is past the retention, then the oldest until the rest fit the cap: a batch at a
   * time, the next batch after the event loop has turned, so a large backlog never holds it long.
   */
  sweep(): void {
    if (this.#sweeping || !this.#db.isOpen) return;
    const deleted = this.#evictBatch();
    if (deleted < EVICTION_BATCH) return;
    this.#sweeping = true;
    setImmediate(() => {
      this.#sweeping = false;
      this.sweep();
    });
  }

  #evictBatch(): number {
    let deleted = 0;
    // `forever` (Infinity) keeps responses until the cap, or a DELETE, removes them.
    if (Number.isFinite(this.#limits.retentionMs)) {
      const expired = this.#prepare('DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE created_at < ? ORDER BY created_at LIMIT ?) RETURNING bytes')
        .all(this.#limits.now() - this.#limits.retentionMs, EVICTION_BATCH) as { bytes: number }[];
      for (const row of expired) this.#bytes -= row.bytes;
      deleted += expired.length;
    }
    if (this.#bytes <= this.#limits.maxBytes) return deleted;
    const oldest = this.#prepare('SELECT id, bytes FROM responses ORDER BY created_at, rowid LIMIT ?').all(EVICTION_BATCH) as { id: string; bytes: number }[];
    const remove = this.#prepare('DELETE FROM responses WHERE id = ?');
    for (const row of oldest) {
      if (this.#bytes <= this.#limits.maxBytes) break;
      remove.run(row.id);
      this.#bytes -= row.bytes;
      deleted++;
    }
    return deleted;
  }
}
