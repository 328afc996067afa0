/**
 * Builds what `npm pack` ships (package.json's `prepack` runs it). The installed package runs
 * JavaScript, because Node does not strip types under node_modules (docs/offline-install.md):
 * - src/ is compiled to dist/ by tsc (tsconfig.build.json), and the files src/ keeps beside its
 *   modules (the console's built assets, the hosted pages, the simulator's WASM) are copied over;
 * - dist/build.json records the commit, which `svc --version` and /api/version report.
 * No npm-shrinkwrap.json: the lock file records node-llama-cpp's prebuilt llama.cpp packages
 * only for the platform it was written on, so a shrinkwrap made from it would leave a macOS or
 * Windows install without its binary.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { svcCommit } from '../src/shared/svc-commit.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Files in src/ that are build inputs, not run-time files: the AssemblyScript kernel and its config. */
function isBuildInput(path: string): boolean {
  return path.endsWith('.ts') || path.endsWith('/asconfig.json');
}

function build(): void {
  const dist = join(ROOT, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  let assets = 0;
  for (const entry of readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })) {
    const from = join(entry.parentPath, entry.name);
    if (!entry.isFile() || isBuildInput(from)) continue;
    const to = join(dist, relative(join(ROOT, 'src'), from));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
    assets++;
  }
  const commit = svcCommit(ROOT);
  writeFileSync(join(dist, 'build.json'), `${JSON.stringify(commit === undefined ? {} : { commit })}\n`);
  process.stderr.write(`build-package: dist/ written (${assets} assets copied, commit ${commit ?? 'unknown'})\n`);
}

build();
