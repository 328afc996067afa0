import type { DatabaseSync } from 'node:sqlite';
import { checkStoreVersion, migrateStore, type StoreMigrationStep } from '../shared/store-version.ts';

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

function storedVersion(db: DatabaseSync): number {
  return Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
}

const where = (path: string) => ({ store: 'responses store', file: path });

/** The file's schema version; StoreVersionError when a newer svc wrote it (checked before any pragma that writes). */
export function checkResponsesVersion(db: DatabaseSync, path: string): number {
  return checkStoreVersion(where(path), storedVersion(db), steps(db).length);
}

/** Brings the file up to the newest schema in one transaction, or refuses one a newer svc wrote. */
export function migrateResponses(db: DatabaseSync, path: string): void {
  const all = steps(db);
  if (checkResponsesVersion(db, path) === all.length) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    // Read again under the write lock: another process may have migrated it meanwhile.
    migrateStore(where(path), storedVersion(db), all, (version) => db.exec(`PRAGMA user_version = ${version}`));
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
