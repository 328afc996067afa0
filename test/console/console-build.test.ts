/**
 * The console's built files are committed (src/console/dist) so the daemon always has them, with
 * no build step at install or start. This test keeps that honest: building console/ again must
 * give the committed files byte for byte, so nobody can change the source without rebuilding
 * (`npm run build:console`) or commit a build that its source does not produce. It also holds
 * the first-load budget of issue 14: at most 150 KB of compressed JavaScript.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { CONSOLE_DIST } from '../../src/console/console-routes.ts';

const CONFIG = new URL('../../console/vite.config.ts', import.meta.url).pathname;
const BUDGET_BYTES = 150 * 1024;

function files(dir: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.set(relative(dir, path), readFileSync(path));
  }
  return found;
}

test('rebuilding console/ gives the committed src/console/dist byte for byte', { timeout: 120_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'svc-console-build-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  await build({ configFile: CONFIG, logLevel: 'error', build: { outDir: out, emptyOutDir: true } });
  const built = files(out);
  const committed = files(CONSOLE_DIST);
  assert.deepEqual([...committed.keys()].sort(), [...built.keys()].sort(), 'the same files (run npm run build:console and commit src/console/dist)');
  for (const [name, bytes] of built) assert.ok(committed.get(name)!.equals(bytes), `${name} differs from the committed build (run npm run build:console)`);
});

test('the first load stays within 150 KB of compressed JavaScript, for the console and for the hosted usage page', () => {
  for (const page of ['index.html', 'usage.html']) {
    const html = readFileSync(join(CONSOLE_DIST, page), 'utf8');
    const scripts = [...html.matchAll(/<script[^>]+src="\.\/([^"]+)"/g), ...html.matchAll(/<link rel="modulepreload"[^>]+href="\.\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(scripts.length > 0, page);
    const compressed = scripts.reduce((sum, path) => sum + gzipSync(readFileSync(join(CONSOLE_DIST, path)), { level: 9 }).length, 0);
    assert.ok(compressed <= BUDGET_BYTES, `${page}: ${compressed} bytes of gzipped JavaScript on first load, budget ${BUDGET_BYTES}`);
  }
});
