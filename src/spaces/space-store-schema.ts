import type { DatabaseSync } from 'node:sqlite';
import { checkSqliteVersion, migrateSqliteStore } from '../shared/sqlite-store.ts';
import type { StoreMigrationStep } from '../shared/store-version.ts';

/**
 * The space store's schema (spaces.db): its tables, the per-space FTS5 table, and the migration
 * that brings a file up to the newest version. space-store.ts reads and writes the rows.
 */

const SCHEMA = `
CREATE TABLE spaces (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  embedder TEXT NOT NULL,
  dimensions INTEGER NOT NULL,
  document_count INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  text_bytes INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE documents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  public_id TEXT NOT NULL UNIQUE,
  space_id INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  title TEXT,
  source TEXT,
  format TEXT NOT NULL,
  metadata TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  text TEXT NOT NULL,
  pages INTEGER,
  chunk_count INTEGER NOT NULL,
  text_bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (space_id, content_hash)
);
CREATE INDEX documents_space ON documents(space_id, id);
CREATE TABLE document_metadata (
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (document_id, key)
) WITHOUT ROWID;
CREATE INDEX document_metadata_value ON document_metadata(key, value);
CREATE TABLE chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  public_id TEXT NOT NULL UNIQUE,
  space_id INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  page INTEGER,
  heading_path TEXT NOT NULL,
  text TEXT NOT NULL,
  UNIQUE (document_id, position)
);
CREATE INDEX chunks_space ON chunks(space_id);
CREATE TABLE chunk_vectors (
  chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
  space_id INTEGER NOT NULL,
  vector BLOB NOT NULL
);
CREATE INDEX chunk_vectors_space ON chunk_vectors(space_id);
CREATE TABLE space_words (
  space_id INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  word TEXT NOT NULL,
  df INTEGER NOT NULL,
  PRIMARY KEY (space_id, word)
) WITHOUT ROWID;
CREATE TABLE reindex_vectors (
  chunk_id INTEGER PRIMARY KEY,
  space_id INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  vector BLOB NOT NULL
);
CREATE INDEX reindex_vectors_space ON reindex_vectors(space_id);
`;

/**
 * FTS5 over one space's chunk text, contentless (the text is in `chunks`) with
 * contentless_delete so a chunk leaves by rowid. Porter stemming over unicode61: on the
 * known-item test in hashed-embedder.ts it found 68.0% in the top 10 against 65.5% without.
 */
export function ftsTableSql(table: string): string {
  return `CREATE VIRTUAL TABLE ${table} USING fts5(text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`;
}

/** The name of space `spaceId`'s FTS5 table (the id is checked: it goes into SQL text). */
export function ftsTable(spaceId: number): string {
  if (!Number.isSafeInteger(spaceId) || spaceId < 1) throw new RangeError(`space store: bad space id ${spaceId}`);
  return `space_text_${spaceId}`;
}

/**
 * Version 2: each space's search defaults (space-types.ts SpaceSearchDefaults). `rerank` is JSON
 * (`false`, `true` or a model id as a JSON string, so no id can be mistaken for off);
 * `rerank_depth` NULL means the search's own default. Existing spaces get `false` and NULL:
 * they search as they did.
 */
const SEARCH_DEFAULTS = `
ALTER TABLE spaces ADD COLUMN rerank TEXT NOT NULL DEFAULT 'false';
ALTER TABLE spaces ADD COLUMN rerank_depth INTEGER DEFAULT NULL;
`;

/**
 * The steps that bring spaces.db forward, one per version (PRAGMA user_version records it):
 * step 0 makes the schema in a new file, step 1 adds the search defaults. svc 0.1.0 stamped
 * version 1, so its files take step 1 only. A new schema is one step appended here (ALTER TABLE …), never an edit of one.
 */
function steps(db: DatabaseSync): StoreMigrationStep[] {
  return [() => db.exec(SCHEMA), () => db.exec(SEARCH_DEFAULTS)];
}

const where = (path: string) => ({ store: 'spaces store', file: path });

/** The file's schema version; StoreVersionError when a newer svc wrote it (checked before any pragma that writes). */
export function checkSpacesVersion(db: DatabaseSync, path: string): number {
  return checkSqliteVersion(db, where(path), steps(db));
}

/** Brings the file at `path` up to the newest schema, or refuses one a newer svc wrote (sqlite-store.ts). */
export function migrate(db: DatabaseSync, path: string): void {
  migrateSqliteStore(db, where(path), steps(db));
}
