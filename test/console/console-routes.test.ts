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
import { buildTestHostedApp } from '../helpers/hosted-app-fixture.ts';

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

test('the hosted usage page: /usage/ redirects (308, relative) to /usage, whose relative URLs then resolve right', async (t) => {
  const { app } = await buildTestHostedApp(t);
  const page = await app.inject({ url: '/api/console/usage' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  for (const [url, location] of [['/api/console/usage/', '../usage'], ['/api/console/usage/?month=2030-02', '../usage?month=2030-02']] as const) {
    const res = await app.inject({ url });
    assert.equal(res.statusCode, 308, url);
    assert.equal(res.headers.location, location, url);
    // Resolved against the slashed URL, the browser lands on the page itself.
    assert.equal(new URL(location, `http://svc.test${url}`).pathname, '/api/console/usage');
  }
});
