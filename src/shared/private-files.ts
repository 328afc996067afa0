import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { chmod, mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The data dir holds what the user asked, stored and paid for, and keys: it is theirs alone.
 * Folders svc makes are 0700 and the files it writes 0600, whatever the umask. A mode given to
 * mkdir or open is only ever narrowed by the umask, never widened, and applies only to what the
 * call creates: so each helper sets the mode itself afterwards, which also tightens a file or
 * folder an older svc left at 0644/0755.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** SQLite's companions of a database file (its unix VFS gives them the database file's own mode when it makes them). */
const SQLITE_COMPANIONS = ['-wal', '-shm', '-journal'];

// Windows has no such modes (chmod there only flips read-only): nothing to narrow.
const POSIX = process.platform !== 'win32';

/** The folders from `dir` up to `first` (the topmost one mkdir made), or `dir` alone when it made none. */
function madeFolders(dir: string, first: string | undefined): string[] {
  const folders = [dir];
  for (let d = dir; first !== undefined && d !== first && dirname(d) !== d; ) {
    d = dirname(d);
    folders.push(d);
  }
  return folders;
}

/**
 * Makes `dir` (and any missing parents) the user's alone: every folder this call creates, and
 * `dir` itself, are set to 0700. Existing parents are left as they are: they may be the user's
 * home or a shared mount, not svc's to change.
 */
export function makePrivateDirSync(dir: string): void {
  let first: string | undefined;
  try {
    first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    throw notADirectory(error, dir);
  }
  if (POSIX) for (const folder of madeFolders(dir, first)) chmodSync(folder, PRIVATE_DIR_MODE);
}

/** makePrivateDirSync, off the event loop (for folders made while requests are served). */
export async function makePrivateDir(dir: string): Promise<void> {
  let first: string | undefined;
  try {
    first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    throw notADirectory(error, dir);
  }
  if (POSIX) for (const folder of madeFolders(dir, first)) await chmod(folder, PRIVATE_DIR_MODE);
}

/**
 * A recursive mkdir of a path that is a file fails with EEXIST ("file already exists"), which
 * reads as if nothing were wrong; it is said as what it is, ENOTDIR, as a mkdir inside it would.
 */
function notADirectory(error: unknown, dir: string): unknown {
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).code !== 'EEXIST') return error;
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`, { cause: error }), { code: 'ENOTDIR', syscall: 'mkdir', path: dir });
}

/** Sets 0600 on an open file (one just created, or one an older svc wrote with another mode). */
export async function makeHandlePrivate(file: FileHandle): Promise<void> {
  if (POSIX) await file.chmod(PRIVATE_FILE_MODE);
}

/** Writes `data` to `path` (replacing what it held) as a file of mode 0600, whatever mode an older file there had. */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  const file = await open(path, 'w', PRIVATE_FILE_MODE);
  try {
    await makeHandlePrivate(file);
    await file.writeFile(data);
  } finally {
    await file.close();
  }
}

/**
 * Readies the path of an SQLite database so that it and everything SQLite keeps beside it are
 * 0600: the folder is made private (makePrivateDirSync), the database file is created empty
 * with mode 0600 if missing (SQLite takes an empty file as a new database; had SQLite made it,
 * it would be 0644 less the umask, and its -wal, -shm and -journal would copy that), and the
 * file and any companions an older svc left are set to 0600.
 */
export function preparePrivateDatabase(path: string): void {
  makePrivateDirSync(dirname(path));
  // 'a': creates if missing, never truncates an existing database.
  const fd = openSync(path, 'a', PRIVATE_FILE_MODE);
  try {
    if (POSIX) fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
  if (!POSIX) return;
  for (const suffix of SQLITE_COMPANIONS) {
    try {
      chmodSync(path + suffix, PRIVATE_FILE_MODE);
    } catch (error) {
      // Usually absent: a clean close removes the WAL, and a WAL database keeps no journal.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
