/**
 * What `npm pack` puts in the tarball that an offline installation carries
 * (docs/offline-install.md): every file the CLI runs (bin/ and all of src/, which Node runs as
 * TypeScript), the docs, and nothing of tests, benchmarks or CI.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

test('npm pack carries bin/ and every file of src/, and leaves tests, benchmarks and CI out', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  const packed = new Set(pack!.files.map((f) => f.path));
  for (const file of ['package.json', 'README.md', 'bin/svc.js', 'src/cli/main.ts', 'docs/offline-install.md']) assert.ok(packed.has(file), `${file} is packed`);
  const missing = [...filesUnder('src'), ...filesUnder('bin')].filter((f) => !packed.has(f));
  assert.deepEqual(missing, [], 'every source file is packed');
  const unwanted = [...packed].filter((f) => /^(test|bench|\.ci|node_modules)\//.test(f) || f === 'package-lock.json' || f === 'tsconfig.json');
  assert.deepEqual(unwanted, []);
});
