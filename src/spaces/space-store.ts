import { endianness } from 'node:os';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { preparePrivateDatabase } from '../shared/private-files.ts';
import { WalCheckpointer } from '../shared/wal-checkpointer.ts';
import type { ChunkRow, ChunkWrite, DocumentRow, DocumentWrite, NewDocument, SpaceRow } from './space-rows.ts';
import { StatementCache, transaction } from '../shared/sqlite-store.ts';
import { checkSpacesVersion, ftsTable, ftsTableSql, migrate } from './space-store-schema.ts';
import { MAX_COUNTED_WORD, WordChanges } from './word-changes.ts';

/**
 * The knowledge spaces' SQLite file: every space, document, chunk, chunk vector (the truth the
 * in-memory vector indexes are filled from), per-space word statistics and, per space, an FTS5
 * table over its chunks. Synchronous on purpose: node:sqlite is, and a write must never yield
 * between BEGIN and COMMIT (a search in the gap would see half a document), so the library
 * embeds first and then calls one of these methods inside `transaction`. The tables are in
 * space-store-schema.ts, the row and write shapes in space-rows.ts.
 *
 * Row ids never come back (AUTOINCREMENT): an id a stale vector index still holds can only
 * miss, never name another chunk.
 */

const BUSY_TIMEOUT_MS = 5000;
/**
 * The checkpointer thread copies the WAL back, but under a sustained ingest it never finds the
 * WAL wholly copied when a transaction starts, so SQLite never rewinds it: 100,000 chunks in bulk
 * left a 394 MB WAL beside a 307 MB file. Past this many pages (32 MiB) the writing connection
 * checkpoints after its commit, as SQLite does by default at 1,000 pages; the thread has copied
 * most of it already, and the WAL starts over.
 */
const WAL_BACKSTOP_PAGES = 4096;

const SPACE_COLUMNS = 'id, name, embedder, dimensions, document_count, chunk_count, text_bytes, created_at, updated_at, rerank, rerank_depth';
const DOCUMENT_COLUMNS = 'id, public_id, space_id, title, source, format, metadata, content_hash, pages, chunk_count, text_bytes, created_at, updated_at';

export class SpaceStore {
  readonly #db: DatabaseSync;
  readonly #statements: StatementCache;
  readonly #checkpointer: WalCheckpointer;

  private constructor(db: DatabaseSync, checkpointer: WalCheckpointer) {
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#checkpointer = checkpointer;
  }

  /** Opens (creating if needed) the store at `path` and brings its schema up to date. */
  static open(path: string): SpaceStore {
    // Vectors are stored as the raw bytes of Float32Arrays, which are little-endian on every
    // platform Node supports; refuse to write anything else into a file another machine may read.
    if (endianness() !== 'LE') throw new Error('space store: big-endian machines are not supported');
    // The user's documents: the file (so its -wal and -shm too) 0600, in a 0700 folder.
    preparePrivateDatabase(path);
    const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
    try {
      // A file a newer svc wrote is refused before the pragmas below could change its header.
      checkSpacesVersion(db, path);
      // WAL + synchronous=NORMAL: a commit is in the WAL before it returns, so a killed process
      // loses nothing it answered (only a power loss can drop the last commits).
      // 8 KiB pages hold a 384-float vector (1.5 KiB) in its row; with 4 KiB pages it spills to an
      // overflow page and filling a space's index from 100,000 vectors took three times as long.
      // (Only a new file takes the size; WAL fixes it after.)
      // Checkpoints (copying the WAL back into the file, and its fsync) run on a thread of their
      // own (src/shared/wal-checkpointer.ts): inside commits they were a large part of ingest.
      db.exec(`PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};
        PRAGMA wal_autocheckpoint = ${WAL_BACKSTOP_PAGES};`);
      migrate(db, path);
    } catch (error) {
      db.close();
      throw error;
    }
    return new SpaceStore(db, new WalCheckpointer(path));
  }

  /** Closes the connection, then lets the checkpointer copy the rest of the WAL back and stop. */
  async close(): Promise<void> {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
    await this.#checkpointer.stop();
  }

  #prepare(sql: string): StatementSync {
    return this.#statements.prepare(sql);
  }

  /** Runs `fn` in one write transaction: all of it commits or none of it does. `fn` must not be async. */
  transaction<T>(fn: () => T): T {
    return transaction(this.#db, fn);
  }

  /** Changes when another connection commits to the file (never for this connection's own writes). */
  dataVersion(): number {
    return Number((this.#prepare('PRAGMA data_version').get() as { data_version: number }).data_version);
  }

  // --- spaces ---

  /** The new space's row, or null when its name key is taken; `defaults` as the row keeps them (`rerank` JSON). */
  insertSpace(name: string, nameKey: string, embedder: string, dimensions: number, defaults: Pick<SpaceRow, 'rerank' | 'rerank_depth'>, now: string): SpaceRow | null {
    const row = this.#prepare(
      `INSERT INTO spaces (name, name_key, embedder, dimensions, rerank, rerank_depth, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (name_key) DO NOTHING RETURNING ${SPACE_COLUMNS}`,
    ).get(name, nameKey, embedder, dimensions, defaults.rerank, defaults.rerank_depth, now, now) as SpaceRow | undefined;
    if (row === undefined) return null;
    this.#db.exec(ftsTableSql(ftsTable(row.id)));
    return row;
  }

  spaceByKey(nameKey: string): SpaceRow | undefined {
    return this.#prepare(`SELECT ${SPACE_COLUMNS} FROM spaces WHERE name_key = ?`).get(nameKey) as SpaceRow | undefined;
  }

  spaceById(id: number): SpaceRow | undefined {
    return this.#prepare(`SELECT ${SPACE_COLUMNS} FROM spaces WHERE id = ?`).get(id) as SpaceRow | undefined;
  }

  listSpaces(): SpaceRow[] {
    return this.#prepare(`SELECT ${SPACE_COLUMNS} FROM spaces ORDER BY name_key`).all() as unknown as SpaceRow[];
  }

  /** Sets the space's search defaults (`rerank` JSON); its row as it is now, or undefined when it is gone. */
  updateSpaceDefaults(id: number, defaults: Pick<SpaceRow, 'rerank' | 'rerank_depth'>, now: string): SpaceRow | undefined {
    return this.#prepare(`UPDATE spaces SET rerank = ?, rerank_depth = ?, updated_at = ? WHERE id = ? RETURNING ${SPACE_COLUMNS}`)
      .get(defaults.rerank, defaults.rerank_depth, now, id) as SpaceRow | undefined;
  }

  deleteSpace(id: number): void {
    const table = ftsTable(id);
    this.#db.exec(`DROP TABLE IF EXISTS ${table}`);
    this.#prepare('DELETE FROM spaces WHERE id = ?').run(id);
    this.#statements.forgetMentioning(table);
  }

  // --- documents ---

  documentByPublicId(spaceId: number, publicId: string): DocumentRow | undefined {
    return this.#prepare(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE public_id = ? AND space_id = ?`).get(publicId, spaceId) as DocumentRow | undefined;
  }

  documentByHash(spaceId: number, contentHash: string): DocumentRow | undefined {
    return this.#prepare(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE space_id = ? AND content_hash = ?`).get(spaceId, contentHash) as DocumentRow | undefined;
  }

  documentText(documentId: number): string {
    return (this.#prepare('SELECT text FROM documents WHERE id = ?').get(documentId) as { text: string }).text;
  }

  /** Up to `limit` of a document's chunks in document order after position `afterPosition` (heading_path as stored: JSON). */
  documentChunks(documentId: number, afterPosition: number, limit: number): Pick<ChunkRow, 'public_id' | 'position' | 'page' | 'heading_path' | 'text'>[] {
    return this.#prepare('SELECT public_id, position, page, heading_path, text FROM chunks WHERE document_id = ? AND position > ? ORDER BY position LIMIT ?').all(documentId, afterPosition, limit) as unknown as Pick<ChunkRow, 'public_id' | 'position' | 'page' | 'heading_path' | 'text'>[];
  }

  /** The position of the chunk `publicId` in the document, if it is one of its chunks. */
  chunkPosition(documentId: number, publicId: string): number | undefined {
    return (this.#prepare('SELECT position FROM chunks WHERE public_id = ? AND document_id = ?').get(publicId, documentId) as { position: number } | undefined)?.position;
  }

  /** Documents in the order they were added, after the row id `afterId`. */
  listDocuments(spaceId: number, afterId: number, limit: number): DocumentRow[] {
    return this.#prepare(`SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE space_id = ? AND id > ? ORDER BY id LIMIT ?`).all(spaceId, afterId, limit) as unknown as DocumentRow[];
  }

  /**
   * Inserts documents with their chunks (call inside `transaction`); returns each one's row and
   * its chunks' row ids in order. The word statistics of all of them are written together, once
   * per distinct word: a transaction of many small documents writes each common word's row once.
   */
  insertDocuments(space: SpaceRow, documents: readonly NewDocument[], now: string): { row: DocumentRow; chunkIds: number[] }[] {
    // run() and the row built here, not RETURNING: an INSERT … RETURNING took twice as long.
    const insert = this.#prepare(
      `INSERT INTO documents (public_id, space_id, title, source, format, metadata, content_hash, text, pages, chunk_count, text_bytes, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const words = new WordChanges();
    let chunkCount = 0;
    let textBytes = 0;
    const inserted = documents.map(({ publicId, document, chunks }) => {
      const { lastInsertRowid } = insert.run(publicId, space.id, document.title, document.source, document.format, document.metadata, document.contentHash, document.text, document.pages, chunks.length, document.textBytes, now, now);
      const row: DocumentRow = {
        id: Number(lastInsertRowid),
        public_id: publicId,
        space_id: space.id,
        title: document.title,
        source: document.source,
        format: document.format,
        metadata: document.metadata,
        content_hash: document.contentHash,
        pages: document.pages,
        chunk_count: chunks.length,
        text_bytes: document.textBytes,
        created_at: now,
        updated_at: now,
      };
      this.#insertMetadata(row.id, document.metadataValues);
      chunkCount += chunks.length;
      textBytes += document.textBytes;
      return { row, chunkIds: this.#insertChunks(space.id, row.id, chunks, words) };
    });
    this.#adjustSpace(space.id, documents.length, chunkCount, textBytes, now);
    this.#adjustWords(space.id, words);
    return inserted;
  }

  /**
   * Replaces a document's fields and chunks (call inside `transaction`): the old chunks leave
   * the chunk table, the FTS table and the word statistics together with the new ones' arrival.
   */
  replaceDocument(space: SpaceRow, old: DocumentRow, document: DocumentWrite, chunks: readonly ChunkWrite[], now: string): { row: DocumentRow; chunkIds: number[]; removedIds: number[] } {
    const words = new WordChanges();
    const removedIds = this.#deleteChunks(space.id, old.id, words);
    this.#prepare('DELETE FROM document_metadata WHERE document_id = ?').run(old.id);
    const row = this.#prepare(
      `UPDATE documents SET title = ?, source = ?, format = ?, metadata = ?, content_hash = ?, text = ?, pages = ?, chunk_count = ?, text_bytes = ?, updated_at = ?
       WHERE id = ? RETURNING ${DOCUMENT_COLUMNS}`,
    ).get(document.title, document.source, document.format, document.metadata, document.contentHash, document.text, document.pages, chunks.length, document.textBytes, now, old.id) as unknown as DocumentRow;
    this.#insertMetadata(old.id, document.metadataValues);
    const chunkIds = this.#insertChunks(space.id, old.id, chunks, words);
    this.#adjustSpace(space.id, 0, chunks.length - old.chunk_count, document.textBytes - old.text_bytes, now);
    this.#adjustWords(space.id, words);
    return { row, chunkIds, removedIds };
  }

  /** Deletes a document and its chunks (call inside `transaction`); returns the chunks' row ids. */
  deleteDocument(space: SpaceRow, document: DocumentRow, now: string): number[] {
    const words = new WordChanges();
    const removedIds = this.#deleteChunks(space.id, document.id, words);
    this.#prepare('DELETE FROM documents WHERE id = ?').run(document.id);
    this.#adjustSpace(space.id, -1, -document.chunk_count, -document.text_bytes, now);
    this.#adjustWords(space.id, words);
    return removedIds;
  }

  #insertMetadata(documentId: number, values: readonly [string, string][]): void {
    const insert = this.#prepare('INSERT INTO document_metadata (document_id, key, value) VALUES (?, ?, ?)');
    for (const [key, value] of values) insert.run(documentId, key, value);
  }

  /** Inserts the chunks, their vectors and FTS rows, and counts their words into `words`. */
  #insertChunks(spaceId: number, documentId: number, chunks: readonly ChunkWrite[], words: WordChanges): number[] {
    const insert = this.#prepare('INSERT INTO chunks (public_id, space_id, document_id, position, page, heading_path, text) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const insertVector = this.#prepare('INSERT INTO chunk_vectors (chunk_id, space_id, vector) VALUES (?, ?, ?)');
    const insertText = this.#prepare(`INSERT INTO ${ftsTable(spaceId)} (rowid, text) VALUES (?, ?)`);
    const ids: number[] = [];
    for (const chunk of chunks) {
      const id = Number(insert.run(chunk.publicId, spaceId, documentId, chunk.position, chunk.page, JSON.stringify(chunk.headingPath), chunk.text).lastInsertRowid);
      insertVector.run(id, spaceId, vectorBytes(chunk.vector));
      insertText.run(id, chunk.text);
      words.add(chunk.text, 1);
      ids.push(id);
    }
    return ids;
  }

  /** Deletes a document's chunks from the chunk and FTS tables, and counts their words out of `words`. */
  #deleteChunks(spaceId: number, documentId: number, words: WordChanges): number[] {
    const rows = this.#prepare('SELECT id, text FROM chunks WHERE document_id = ?').all(documentId) as { id: number; text: string }[];
    const deleteText = this.#prepare(`DELETE FROM ${ftsTable(spaceId)} WHERE rowid = ?`);
    for (const { id, text } of rows) {
      deleteText.run(id);
      words.add(text, -1);
    }
    this.#prepare('DELETE FROM chunks WHERE document_id = ?').run(documentId);
    return rows.map((row) => row.id);
  }

  #adjustSpace(spaceId: number, documents: number, chunks: number, textBytes: number, now: string): void {
    this.#prepare(
      'UPDATE spaces SET document_count = document_count + ?, chunk_count = chunk_count + ?, text_bytes = text_bytes + ?, updated_at = ? WHERE id = ?',
    ).run(documents, chunks, textBytes, now, spaceId);
  }

  /** Applies net changes of document frequencies (word-changes.ts): one statement per changed word; a word no chunk holds any more leaves. */
  #adjustWords(spaceId: number, changes: WordChanges): void {
    const raise = this.#prepare('INSERT INTO space_words (space_id, word, df) VALUES (?, ?, ?) ON CONFLICT (space_id, word) DO UPDATE SET df = df + excluded.df');
    const lower = this.#prepare('UPDATE space_words SET df = df - ? WHERE space_id = ? AND word = ? RETURNING df');
    const drop = this.#prepare('DELETE FROM space_words WHERE space_id = ? AND word = ?');
    for (const [word, change] of changes.entries()) {
      if (change > 0) {
        raise.run(spaceId, word, change);
      } else if (change < 0) {
        const row = lower.get(-change, spaceId, word) as { df: number } | undefined;
        if (row !== undefined && row.df <= 0) drop.run(spaceId, word);
      }
    }
  }

  /** How many of the space's chunks hold each word (absent: none). */
  documentFrequencies(spaceId: number, words: readonly string[]): Map<string, number> {
    const select = this.#prepare('SELECT df FROM space_words WHERE space_id = ? AND word = ?');
    const result = new Map<string, number>();
    for (const word of words) {
      if (word.length > MAX_COUNTED_WORD) continue;
      const row = select.get(spaceId, word) as { df: number } | undefined;
      if (row !== undefined) result.set(word, row.df);
    }
    return result;
  }

  // --- search ---

  /**
   * Row ids of the documents in the space that pass a filter: public ids (null: any) and
   * metadata key/value-JSON pairs that must all be present.
   */
  filterDocuments(spaceId: number, publicIds: readonly string[] | null, metadata: readonly [string, string][]): number[] {
    let sql = 'SELECT d.id FROM documents d WHERE d.space_id = ?';
    const params: SQLInputValue[] = [spaceId];
    if (publicIds !== null) {
      sql += ' AND d.public_id IN (SELECT value FROM json_each(?))';
      params.push(JSON.stringify(publicIds));
    }
    for (const [key, value] of metadata) {
      sql += ' AND EXISTS (SELECT 1 FROM document_metadata m WHERE m.document_id = d.id AND m.key = ? AND m.value = ?)';
      params.push(key, value);
    }
    return (this.#prepare(sql).all(...params) as { id: number }[]).map((row) => row.id);
  }

  chunkIdsOfDocuments(documentIds: readonly number[]): number[] {
    return (this.#prepare('SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?))').all(JSON.stringify(documentIds)) as { id: number }[]).map((row) => row.id);
  }

  /**
   * The best `limit` chunks by FTS5's BM25 for a MATCH expression, best first, within
   * `documentIds` when given; `score` is BM25 as a larger-is-better number (FTS5's rank negated).
   */
  bm25(spaceId: number, expression: string, limit: number, documentIds: readonly number[] | null): { id: number; score: number }[] {
    const table = ftsTable(spaceId);
    const rows = documentIds === null
      ? this.#prepare(`SELECT rowid AS id, -rank AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY rank LIMIT ?`).all(expression, limit)
      : this.#prepare(
        `SELECT ${table}.rowid AS id, -${table}.rank AS score FROM ${table} JOIN chunks c ON c.id = ${table}.rowid
         WHERE ${table} MATCH ? AND c.document_id IN (SELECT value FROM json_each(?)) ORDER BY ${table}.rank LIMIT ?`,
      ).all(expression, JSON.stringify(documentIds), limit);
    return rows as { id: number; score: number }[];
  }

  /** The chunks of the space among `ids` that still exist, with their document's citation fields (any order). */
  chunksByIds(spaceId: number, ids: readonly number[]): ChunkRow[] {
    return this.#prepare(
      `SELECT c.id, c.public_id, c.position, c.page, c.heading_path, c.text, d.public_id AS document_public_id, d.title, d.source
       FROM chunks c JOIN documents d ON d.id = c.document_id
       WHERE c.id IN (SELECT value FROM json_each(?)) AND c.space_id = ?`,
    ).all(JSON.stringify(ids), spaceId) as unknown as ChunkRow[];
  }

  /** The row id of the space's newest chunk (ids only grow), or null when it has none. */
  newestChunkId(spaceId: number): number | null {
    const row = this.#prepare('SELECT max(id) AS id FROM chunks WHERE space_id = ?').get(spaceId) as { id: number | null };
    return row.id;
  }

  /** Every chunk vector of the space, for filling its vector index. */
  *vectors(spaceId: number): Generator<{ id: number; vector: Float32Array }> {
    for (const row of this.#prepare('SELECT chunk_id, vector FROM chunk_vectors WHERE space_id = ?').iterate(spaceId)) {
      const { chunk_id: id, vector } = row as { chunk_id: number; vector: Uint8Array };
      yield { id, vector: bytesVector(vector) };
    }
  }

  /** The stored vectors of these chunk ids, in order (undefined for one not held): what an index rescores from. */
  vectorsOf(ids: readonly number[]): (Float32Array | undefined)[] {
    const select = this.#prepare('SELECT vector FROM chunk_vectors WHERE chunk_id = ?');
    return ids.map((id) => {
      const row = select.get(id) as { vector: Uint8Array } | undefined;
      return row === undefined ? undefined : bytesVector(row.vector);
    });
  }

  // --- reindex (vectors of another embedder written aside, then swapped in at once) ---

  clearReindexVectors(spaceId: number): void {
    this.#prepare('DELETE FROM reindex_vectors WHERE space_id = ?').run(spaceId);
  }

  /** Up to `limit` chunks of the space after row id `afterId`, in row id order. */
  chunksAfter(spaceId: number, afterId: number, limit: number): { id: number; text: string }[] {
    return this.#prepare('SELECT id, text FROM chunks WHERE space_id = ? AND id > ? ORDER BY id LIMIT ?').all(spaceId, afterId, limit) as { id: number; text: string }[];
  }

  /** Up to `limit` chunks of the space that have no new vector yet. */
  chunksWithoutReindexVector(spaceId: number, limit: number): { id: number; text: string }[] {
    return this.#prepare(
      `SELECT c.id, c.text FROM chunks c WHERE c.space_id = ? AND NOT EXISTS (SELECT 1 FROM reindex_vectors r WHERE r.chunk_id = c.id) ORDER BY c.id LIMIT ?`,
    ).all(spaceId, limit) as { id: number; text: string }[];
  }

  putReindexVectors(spaceId: number, entries: readonly { id: number; vector: Float32Array }[]): void {
    const insert = this.#prepare('INSERT OR REPLACE INTO reindex_vectors (chunk_id, space_id, vector) VALUES (?, ?, ?)');
    for (const { id, vector } of entries) insert.run(id, spaceId, vectorBytes(vector));
  }

  /** Moves the new vectors into the chunks and records the embedder (call inside `transaction`, after checking none is missing). */
  swapReindexVectors(spaceId: number, embedder: string, dimensions: number, now: string): void {
    this.#prepare('UPDATE chunk_vectors SET vector = (SELECT r.vector FROM reindex_vectors r WHERE r.chunk_id = chunk_vectors.chunk_id) WHERE space_id = ?').run(spaceId);
    this.#prepare('UPDATE spaces SET embedder = ?, dimensions = ?, updated_at = ? WHERE id = ?').run(embedder, dimensions, now, spaceId);
    this.clearReindexVectors(spaceId);
  }
}

function vectorBytes(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

function bytesVector(bytes: Uint8Array): Float32Array {
  // A view when the bytes are aligned for floats, a copy when not.
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return new Float32Array(bytes.slice().buffer);
}
