import { readFile, stat, unlink } from 'node:fs/promises';
import { PullError } from './pull-error.ts';

/**
 * The files beside a download in progress: `<dest>.partial` (the bytes so far),
 * `<dest>.partial.json` (what they are a prefix of) and `<dest>.partial.lock`, and the file
 * system errors a download turns into PullErrors.
 */

/** What the partial is a prefix of: the URL, the publisher's sha256 and size, the server's validator for `If-Range`. */
export interface PartialMeta {
  url: string;
  sha256?: string | undefined;
  size?: number | undefined;
  etag?: string | undefined;
  lastModified?: string | undefined;
}

/** The partial-download files that belong to `dest` (for cleanup by `rm`). */
export function partialPaths(dest: string): string[] {
  return [`${dest}.partial`, `${dest}.partial.json`, `${dest}.partial.lock`];
}

/** A file system error while `doing` `path` as the PullError a user can act on (disk full, permission); any other as it is. */
export function fsError(error: unknown, path: string, doing: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new PullError('disk_full', `disk full while ${doing} ${path}; free some space and run the command again to resume`, { cause: error });
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new PullError('permission', `cannot write ${path}: ${code === 'EROFS' ? 'read-only file system' : 'permission denied'}`, { cause: error });
  return error;
}

/** A file's size; 0 when it is not there. */
export async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** Deletes a file that may already be gone. */
export async function removeQuietly(path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  });
}

/** The partial's metadata, or undefined when it is missing or unreadable. */
export async function readPartialMeta(path: string): Promise<PartialMeta | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (typeof value === 'object' && value !== null && typeof (value as PartialMeta).url === 'string') return value as PartialMeta;
  } catch {
    // Missing or unreadable: resume without a validator (the checksum still guards hub files).
  }
  return undefined;
}
