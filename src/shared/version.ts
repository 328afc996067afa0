import { readFileSync } from 'node:fs';

interface PackageManifest {
  version: string;
  engines?: { node?: string };
  /** The commit a pack step may record (`npm pkg set commit=$(git rev-parse HEAD)`); absent in a checkout. */
  commit?: string;
  /** What npm records when it publishes from a git checkout. */
  gitHead?: string;
}

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as PackageManifest;

/** The package version, read once from package.json. */
export const SVC_VERSION: string = manifest.version;

/** The Node versions the package says it runs on (`engines.node`, e.g. `>=24.0.0`). */
export const SVC_NODE_RANGE: string | undefined = manifest.engines?.node;

/** The commit package.json records, when a pack step wrote one (svc-commit.ts reads a checkout first). */
export const PACKAGED_COMMIT: string | undefined = [manifest.commit, manifest.gitHead].find((c) => typeof c === 'string' && /^[0-9a-f]{7,64}$/i.test(c));
