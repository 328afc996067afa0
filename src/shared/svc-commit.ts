import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGED_COMMIT } from './version.ts';

/** The package root: the checkout's working tree, or the installed package's folder. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/i;

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The git directory of `root`: `.git` itself, or, in a worktree or submodule, the folder its
 * `.git` file names (`gitdir: …`), and the common directory where refs and packed-refs live
 * (a worktree's `commondir` file; the git directory itself otherwise).
 */
function gitDirs(root: string): { gitDir: string; commonDir: string } | undefined {
  const dotGit = join(root, '.git');
  const file = readText(dotGit);
  let gitDir = dotGit;
  if (file !== undefined) {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(file);
    if (match === null) return undefined;
    gitDir = isAbsolute(match[1]!) ? match[1]! : resolve(root, match[1]!);
  }
  const common = readText(join(gitDir, 'commondir'))?.trim();
  return { gitDir, commonDir: common === undefined || common === '' ? gitDir : resolve(gitDir, common) };
}

/** A ref's sha: its loose file (the worktree's own refs first), else its line in packed-refs. */
function resolveRef(ref: string, dirs: { gitDir: string; commonDir: string }): string | undefined {
  // A ref names a path under the git directory: refuse anything that could climb out of it.
  if (!/^refs\/[\w./-]+$/.test(ref) || ref.split('/').includes('..')) return undefined;
  for (const dir of new Set([dirs.gitDir, dirs.commonDir])) {
    const loose = readText(join(dir, ref))?.trim();
    if (loose !== undefined && SHA.test(loose)) return loose;
  }
  for (const line of (readText(join(dirs.commonDir, 'packed-refs')) ?? '').split('\n')) {
    const [sha, name] = line.trim().split(' ');
    if (name === ref && sha !== undefined && SHA.test(sha)) return sha;
  }
  return undefined;
}

/**
 * The commit svc runs from, read without spawning git (which may not be installed): HEAD of the
 * git checkout at `root`, a detached sha or a branch resolved through its ref file or
 * packed-refs; else the commit package.json records (an installed package has no .git); else
 * undefined. Symbolic refs are followed a few levels at most.
 */
export function svcCommit(root: string = PACKAGE_ROOT, packaged: string | undefined = PACKAGED_COMMIT): string | undefined {
  const dirs = gitDirs(root);
  let head = dirs === undefined ? undefined : readText(join(dirs.gitDir, 'HEAD'))?.trim();
  for (let depth = 0; dirs !== undefined && head !== undefined && depth < 5; depth++) {
    if (SHA.test(head)) return head.toLowerCase();
    const symbolic = /^ref:\s*(\S+)$/.exec(head);
    head = symbolic === null ? undefined : resolveRef(symbolic[1]!, dirs);
  }
  return packaged;
}

/** `svc 0.1.0 (1a2b3c4d5e6f)`, or `svc 0.1.0 (commit unknown)` when no commit can be found. */
export function versionLine(version: string, commit: string | undefined): string {
  return `svc ${version} (${commit === undefined ? 'commit unknown' : commit.slice(0, 12)})`;
}
