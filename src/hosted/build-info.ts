import { fileURLToPath } from 'node:url';
import { svcCommit } from '../shared/svc-commit.ts';
import { SVC_VERSION } from '../shared/version.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What `/api/version` reports about the build; a value nobody knows is null, never made up. */
export interface BuildInfo {
  version: string;
  /** The full commit hash, or null. */
  commit: string | null;
}

/**
 * The commit this build runs: the git checkout's HEAD or the commit the package recorded
 * (svc-commit.ts, the same answer `svc --version` gives), else `SVC_COMMIT` (set by whoever
 * deployed it some other way, a container image without .git), else null. Read once at start.
 */
export function readCommit(env: NodeJS.ProcessEnv = process.env, root = ROOT): string | null {
  const known = svcCommit(root);
  if (known !== undefined) return known;
  const fromEnv = env.SVC_COMMIT?.trim();
  return fromEnv !== undefined && /^[0-9a-f]{7,64}$/i.test(fromEnv) ? fromEnv.toLowerCase() : null;
}

export function readBuildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: SVC_VERSION, commit: readCommit(env) };
}
