import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SVC_VERSION } from '../shared/version.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What `/api/version` reports about the build; a value nobody knows is null, never made up. */
export interface BuildInfo {
  version: string;
  /** The full commit hash, or null. */
  commit: string | null;
}

/**
 * The commit this build runs: `git rev-parse HEAD` where the install is a git checkout, else
 * `SVC_COMMIT` (set by whoever packaged it), else null. Read once at start.
 */
export function readCommit(env: NodeJS.ProcessEnv = process.env, root = ROOT): string | null {
  if (existsSync(`${root}/.git`)) {
    try {
      const out = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(out)) return out;
    } catch {
      // No git on this machine, or not a usable repository: fall through to the variable.
    }
  }
  const fromEnv = env.SVC_COMMIT?.trim();
  return fromEnv !== undefined && /^[0-9a-f]{7,64}$/i.test(fromEnv) ? fromEnv.toLowerCase() : null;
}

export function readBuildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: SVC_VERSION, commit: readCommit(env) };
}
