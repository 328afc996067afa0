import { readFileSync } from 'node:fs';

interface PackageManifest {
  version: string;
  dependencies?: { node?: string };
}

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as PackageManifest;

/** The package version, read once from package.json. */
export const SVC_VERSION: string = manifest.version;

/**
 * The Node svc's code runs on: the major of the `node` package it pins (`>=24.0.0`). package.json's
 * `engines.node` is lower, because it speaks for bin/svc.js, which starts on any Node from 20 on
 * and hands over to the pinned one.
 */
export const SVC_NODE_RANGE: string | undefined = (() => {
  const major = /^\D*(\d+)\./.exec(manifest.dependencies?.node ?? '')?.[1];
  return major === undefined ? undefined : `>=${major}.0.0`;
})();

/**
 * The commit the package was built from: `dist/build.json`, which scripts/build-package.ts writes
 * when `npm pack` runs (svc-commit.ts reads a checkout's .git first; a checkout has no such file).
 */
export const PACKAGED_COMMIT: string | undefined = (() => {
  let build: unknown;
  try {
    build = JSON.parse(readFileSync(new URL('../build.json', import.meta.url), 'utf8'));
  } catch {
    return undefined;
  }
  const commit = typeof build === 'object' && build !== null && Object.hasOwn(build, 'commit') ? (build as { commit: unknown }).commit : undefined;
  return typeof commit === 'string' && /^[0-9a-f]{7,64}$/i.test(commit) ? commit.toLowerCase() : undefined;
})();
