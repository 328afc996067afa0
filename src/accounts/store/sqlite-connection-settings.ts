/**
 * What every connection to the embedded hosted store sets: the store's own and its ledger
 * writer thread's (journal_mode = WAL is the file's, set once by the store).
 *
 * synchronous = NORMAL in WAL mode: a commit is in the WAL (the OS has it) before it returns, so
 * a killed process loses nothing it answered; only a power loss can drop the last commits. FULL
 * would fsync every commit, which is most of a ledger write's time on ordinary disks. Automatic
 * checkpoints are off: they run on their own thread (wal-checkpointer.ts says why).
 */
export function sqliteConnectionPragmas(busyTimeoutMs: number): string {
  return `
    PRAGMA synchronous = NORMAL;
    PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)};
    PRAGMA foreign_keys = ON;
    PRAGMA wal_autocheckpoint = 0;
  `;
}
