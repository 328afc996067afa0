import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Every entry under `root` (and `root` itself) whose mode is not the data dir's: each folder
 * 0700, each file 0600. Returned as `path mode` lines, so a failing assertion names them all.
 */
export function entriesNotPrivate(root: string): string[] {
  const wrong: string[] = [];
  const visit = (path: string): void => {
    const stat = lstatSync(path);
    const mode = stat.mode & 0o777;
    const want = stat.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) wrong.push(`${relative(root, path) || '.'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return wrong;
}

/** How many files (not folders) are under `root`: a walk that found nothing proves nothing. */
export function fileCount(root: string): number {
  let count = 0;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) if (!entry.isDirectory()) count++;
  return count;
}

/** Runs `body` to its end (the umask applies when its syscalls run, so async ones too) under `mask`, then restores the umask. */
export async function withUmask<T>(mask: number, body: () => T | Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await body();
  } finally {
    process.umask(before);
  }
}
