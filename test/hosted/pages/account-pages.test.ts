import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { launch } from '../../helpers/console-browser.ts';
import { buildTestHostedApp, FREE_PLAN } from '../../helpers/hosted-app-fixture.ts';

const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', 'test-artifacts');

test('the key page and its assets are served with a strict CSP and no external URL', async (t) => {
  const { app } = await buildTestHostedApp(t);
  const page = await app.inject({ url: '/settings/api-keys' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  const csp = String(page.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self';/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(page.headers['x-frame-options'], 'DENY');
  for (const url of ['/settings/api-keys', '/settings/assets/api-keys.js', '/settings/assets/sign-in.js', '/settings/assets/pages.css', '/api/session/sign-in']) {
    const res = await app.inject({ url });
    assert.equal(res.statusCode, 200, url);
    assert.doesNotMatch(res.body, /https?:\/\//, `${url} names no external URL`);
    assert.doesNotMatch(res.body, /<script>|\son\w+=/, `${url} has no inline script or handler`);
  }
  assert.equal((await app.inject({ url: '/settings/assets/../../etc/passwd' })).statusCode, 404);
  assert.equal((await app.inject({ url: '/settings/assets/nope.js' })).statusCode, 404);
});

test('in headless Chromium: sign in by link, create a key, copy its secret, revoke it', { timeout: 120_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const { app, store } = await buildTestHostedApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const account = await store.createAccount({ name: 'browser', plan: FREE_PLAN });
  const { token } = await store.createSignInToken(account.id, 60_000);

  // The console tests' Chromium and flags (no background networking: this machine has no route out).
  const browser = await launch();
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text()); });
  page.on('pageerror', (error) => cspViolations.push(String(error)));

  // Not signed in: a clear message, no form.
  await page.goto(`${base}/settings/api-keys`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  assert.match(await page.locator('#signed-out').innerText(), /not signed in/);
  assert.equal(await page.locator('#signed-in').isVisible(), false);

  // The link's page does not sign in by itself; the button does.
  await page.goto(`${base}/api/session/sign-in?token=${token}`);
  await page.locator('#sign-in:not([disabled])').waitFor();
  assert.equal(new URL(page.url()).search, '', 'the token is taken out of the address bar');
  assert.deepEqual(await context.cookies(), [], 'opening the link set no cookie');
  await page.click('#sign-in');
  await page.waitForURL(`${base}/settings/api-keys`);
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  const [cookie] = await context.cookies();
  assert.equal(cookie?.name, 'svc_session');
  assert.equal(cookie?.httpOnly, true);
  assert.equal(cookie?.sameSite, 'Strict');
  assert.equal(await page.evaluate('document.cookie'), '', 'the page script cannot read the session cookie');

  await page.fill('#name', 'ci laptop');
  await page.fill('#project', 'proj-web');
  await page.click('#create-button');
  await page.locator('#new-secret').waitFor({ state: 'visible' });
  const secret = await page.locator('#secret').innerText();
  assert.match(secret, /^svc_dk_[A-Za-z0-9_-]{43}$/);
  const check = await store.checkKey(secret);
  assert.equal(check.status === 'valid' ? check.account.id : check.status, account.id, 'the page shows the real secret');

  await page.click('#copy');
  await page.locator('#copy-status', { hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

  const row = page.locator('#keys tr', { hasText: 'ci laptop' });
  await row.waitFor();
  assert.match(await row.innerText(), /developer_runtime[\s\S]*proj-web[\s\S]*svc_dk_\S*…\S{4}[\s\S]*active/);
  assert.ok(!(await page.locator('#keys').innerText()).includes(secret), 'the list never shows the secret');

  await page.screenshot({ path: join(ARTIFACTS, 'settings-api-keys-created.png'), fullPage: true });

  let confirmText = '';
  page.once('dialog', (dialog) => { confirmText = dialog.message(); void dialog.accept(); });
  await row.locator('button.revoke').click();
  await row.locator('.status', { hasText: 'revoked' }).waitFor();
  assert.match(confirmText, /Revoke the key ci laptop\?/);
  assert.equal(await row.locator('button.revoke').count(), 0);
  assert.equal((await store.checkKey(secret)).status, 'revoked');

  // A reload lists the key as revoked, from the server.
  await page.reload();
  await page.locator('#keys tr', { hasText: 'ci laptop' }).locator('.status', { hasText: 'revoked' }).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'settings-api-keys.png'), fullPage: true });

  await page.click('#sign-out');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  assert.deepEqual(cspViolations, [], 'no CSP violations or script errors');
});
