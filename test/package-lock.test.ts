/**
 * `npm ci` refuses a lock that lacks an entry for any dependency the tree declares, optional
 * platform packages included (`Missing: @node-llama-cpp/mac-x64@ from lock file`), even those
 * it would skip on this platform. npm install leaves such entries out when the registry it
 * talks to does not serve the pinned version, so the check lives here rather than in CI only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

interface LockEntry {
  version?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as { lockfileVersion: number; packages: Record<string, LockEntry> };
const packages = new Map(Object.entries(lock.packages));

/** Where Node (and npm) find `name` from the package at `location`: its own node_modules, then each parent's. */
function resolve(location: string, name: string): string | undefined {
  let dir = location;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages.has(candidate)) return candidate;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

test('the lock has an entry for every dependency, optional platform packages included', () => {
  assert.equal(lock.lockfileVersion, 3);
  const missing: string[] = [];
  const wrongVersion: string[] = [];
  for (const [location, entry] of packages) {
    if (entry.link === true) continue;
    const declared = { ...entry.dependencies, ...entry.optionalDependencies, ...(location === '' ? entry.devDependencies : {}) };
    for (const [name, spec] of Object.entries(declared)) {
      const found = resolve(location, name);
      if (found === undefined) {
        missing.push(`${name}@${spec} (for ${location || 'the root'})`);
        continue;
      }
      // Platform packages are pinned to one version; any other exact pin must match too.
      if (/^\d+\.\d+\.\d+$/.test(spec) && packages.get(found)?.version !== spec) wrongVersion.push(`${found}: ${packages.get(found)?.version} for ${spec}`);
    }
  }
  assert.deepEqual(missing, [], `npm ci would refuse the lock: ${missing.length} missing`);
  assert.deepEqual(wrongVersion, []);
});
