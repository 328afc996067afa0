import { UserError } from './user-error.ts';
import { SVC_VERSION } from './version.ts';

/**
 * The one rule every store svc keeps in a data dir follows across upgrades (docs/runtime.md,
 * "Upgrades and data"): the store records its schema version in itself; at open, an older
 * version is brought forward one step at a time, and a version newer than this build knows is
 * refused before anything is written, so a downgrade never damages what a newer svc wrote.
 */

/** A store as the refusal names it: what it is (`spaces store`) and where (a file, or a database). */
export interface StoreLocation {
  store: string;
  file: string;
}

/**
 * A store written by a newer svc (or with a version marker this build cannot read). The message
 * is one line: the store, the file, the version found, the version known, and what to do.
 */
export class StoreVersionError extends UserError {
  override name = 'StoreVersionError';
  readonly store: string;
  readonly file: string;
  readonly found: number | string;
  readonly known: number | string;

  constructor(where: StoreLocation, found: number | string, known: number | string, options: { unreadable?: boolean } = {}) {
    const what = options.unreadable === true
      ? `has a schema version this svc cannot read (${found}; it knows up to ${known})`
      : `has schema version ${found}, newer than this svc (${SVC_VERSION}) knows (${known}): a newer svc wrote it`;
    super(`${where.store} ${where.file} ${what}. Upgrade svc to open it, or point --data-dir at a backup made before the upgrade; the file was left as it is.`, { exitCode: 2 });
    this.store = where.store;
    this.file = where.file;
    this.found = found;
    this.known = known;
  }
}

/**
 * Checks a stored schema version against the newest this build knows: returns it when it is a
 * whole number from 0 (no marker yet: what svc 0.1.0 left, or a new store) to `known`; throws
 * StoreVersionError otherwise, before the caller has written anything.
 */
export function checkStoreVersion(where: StoreLocation, found: unknown, known: number): number {
  if (typeof found !== 'number' || !Number.isSafeInteger(found) || found < 0) {
    throw new StoreVersionError(where, JSON.stringify(found) ?? String(found), known, { unreadable: true });
  }
  if (found > known) throw new StoreVersionError(where, found, known);
  return found;
}

/**
 * One step per version: `steps[n]` brings a store from version n to n + 1 (step 0 makes a new
 * store or stamps one an older svc left without a marker). The next schema is one step
 * appended; a shipped step is never edited.
 */
export type StoreMigrationStep = () => void;

/**
 * Runs the steps from `found` up to the newest (`steps.length`), each with `stamp` of its new
 * version (the store writes its marker, in the same transaction as the step where it can), or
 * refuses a newer store. Returns the version the store is at now; nothing runs when it is current.
 */
export function migrateStore(where: StoreLocation, found: unknown, steps: readonly StoreMigrationStep[], stamp: (version: number) => void): number {
  const from = checkStoreVersion(where, found, steps.length);
  for (let version = from; version < steps.length; version++) {
    steps[version]!();
    stamp(version + 1);
  }
  return steps.length;
}
