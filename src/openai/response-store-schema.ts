import type { DatabaseSync } from 'node:sqlite';
import { checkSqliteVersion, migrateSqliteStore } from '../shared/sqlite-store.ts';
import type { StoreMigrationStep } from '../shared/store-version.ts';

/**
 * The stored responses' schema (`<data-dir>/responses/responses.db`) and the migration that
 * brings a file up to the newest version; response-store.ts reads and writes the rows.
 *
 * A response keeps only its own turns: the input items it was sent (`response_items`, in order)
 * and the Response object (its `output` items inside). A continuation's conversation is its
 * chain (`previous_id` back to the first response), so nothing is copied from turn to turn, and a
 * chain whose older link was evicted or deleted can no longer be continued.
 */
const SCHEMA = `
CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  previous_id TEXT,
  created_at INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  response TEXT NOT NULL
);
CREATE INDEX responses_age ON responses(created_at, bytes);
CREATE TABLE response_items (
  response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  id TEXT NOT NULL,
  item TEXT NOT NULL,
  PRIMARY KEY (response_id, position)
) WITHOUT ROWID;
CREATE INDEX response_items_id ON response_items(response_id, id);
`;

/** One step per version (PRAGMA user_version records it); a new schema is one step appended, never an edit. */
function steps(db: DatabaseSync): StoreMigrationStep[] {
  return [() => db.exec(SCHEMA)];
}

const where = (path: string) => ({ store: 'responses store', file: path });

/** The file's schema version; StoreVersionError when a newer svc wrote it (checked before any pragma that writes). */
export function checkResponsesVersion(db: DatabaseSync, path: string): number {
  return checkSqliteVersion(db, where(path), steps(db));
}

/** Brings the file up to the newest schema in one transaction, or refuses one a newer svc wrote (sqlite-store.ts). */
export function migrateResponses(db: DatabaseSync, path: string): void {
  migrateSqliteStore(db, where(path), steps(db));
}
