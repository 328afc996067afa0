/**
 * The console's cache rule, served for real (Fastify, @fastify/static) from a copy of the built
 * console placed under a folder named `assets`, as if svc were installed there: index.html must
 * still be revalidated, and only the hashed files under the console's own `assets/` cached.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { CONSOLE_DIST, consoleRoutes } from '../../src/console/console-routes.ts';

test('installed under a folder named assets, index.html is revalidated and only the hashed assets are immutable', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-console-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'assets', 'svc', 'dist');
  cpSync(CONSOLE_DIST, root, { recursive: true });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(consoleRoutes, { root });

  for (const path of ['/', '/index.html']) {
    const page = await app.inject({ method: 'GET', url: path });
    assert.equal(page.statusCode, 200, path);
    assert.equal(page.headers['cache-control'], 'no-cache', path);
  }
  const assets = readdirSync(join(root, 'assets'));
  assert.ok(assets.length > 0);
  for (const name of assets) {
    const asset = await app.inject({ method: 'GET', url: `/assets/${name}` });
    assert.equal(asset.statusCode, 200, name);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable', name);
  }
});
