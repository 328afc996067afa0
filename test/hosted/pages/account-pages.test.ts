import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { axeViolations, fitsWidth, keepScreenshots, closeBrowser, launch } from '../../helpers/console-browser.ts';
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
  t.after(() => closeBrowser(browser));
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

  // The header: the console's, with the hosted pages and sign out.
  assert.equal(await page.locator('header.top nav a[aria-current="page"]').getAttribute('href'), '/settings/api-keys');
  assert.deepEqual(await page.locator('header.top nav a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')])), [['API keys', '/settings/api-keys'], ['Usage', '/api/console/usage']]);
  assert.ok(await page.locator('header.top #sign-out').isVisible(), 'sign out is in the header');
  // The console's look: a primary button is the accent blue, not the browser's grey.
  assert.equal(await page.evaluate("getComputedStyle(document.getElementById('create-button')).backgroundColor"), 'rgb(29, 78, 216)');

  // The scope that can chat is listed first and chosen by default.
  assert.equal(await page.locator('#scope').inputValue(), 'supercomputer');
  assert.equal(await page.locator('#scope option').first().getAttribute('value'), 'supercomputer');
  // This account has no hosted plan: the refusal is a plain sentence under the scope field, not at the page's foot.
  await page.click('#create-button');
  const scopeError = page.locator('#scope-error');
  await scopeError.waitFor({ state: 'visible' });
  assert.match(await scopeError.innerText(), /no hosted-compute plan[\s\S]*Identity only/);
  assert.doesNotMatch(await scopeError.innerText(), /entitlement|developer_runtime|insufficient_quota/, 'no schema words');
  assert.equal(await page.locator('#scope').getAttribute('aria-invalid'), 'true');
  assert.equal(await scopeError.evaluate((e) => e.closest('.field')?.querySelector('#scope') !== null), true, 'the error sits with its field');
  assert.equal(await page.locator('#error').isVisible(), false);
  assert.deepEqual(await axeViolations(page), [], 'axe, with an inline error shown');
  // A project with a space: the API's `project: …` schema message becomes a sentence by the project field.
  await page.selectOption('#scope', 'developer_runtime');
  await page.fill('#project', 'my project');
  await page.click('#create-button');
  await page.locator('#project-error').waitFor({ state: 'visible' });
  assert.match(await page.locator('#project-error').innerText(), /^A project is 1 to 128 letters, digits or symbols, with no spaces\./);
  assert.equal(await scopeError.isVisible(), false, 'the earlier error is cleared');

  await page.selectOption('#scope', 'developer_runtime');
  await page.fill('#name', 'ci laptop');
  await page.fill('#project', 'proj-web');
  await page.click('#create-button');
  await page.locator('#new-secret').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#project-error').isVisible(), false);
  const secret = await page.locator('#secret').innerText();
  assert.match(secret, /^svc_dk_[A-Za-z0-9_-]{43}$/);
  const check = await store.checkKey(secret);
  assert.equal(check.status === 'valid' ? check.account.id : check.status, account.id, 'the page shows the real secret');

  await page.click('#copy');
  await page.locator('#copy-status', { hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

  // The quick start: this origin's /api/v1, the models the hosted API lists, and (this key
  // cannot chat) a note saying so instead of a curl line that would answer 402.
  assert.equal(await page.locator('#base-url').innerText(), `${base}/api/v1`);
  const models = (await (await fetch(`${base}/api/v1/models`)).json() as { data: { id: string }[] }).data.map((m) => m.id);
  assert.ok(models.length > 0);
  assert.deepEqual(await page.locator('#models code').allInnerTexts(), models);
  assert.match(await page.locator('#quick-start-note').innerText(), /identity only[\s\S]*402/);
  assert.equal(await page.locator('#curl').isVisible(), false);

  const row = page.locator('#keys tr', { hasText: 'ci laptop' });
  await row.waitFor();
  // Times are ISO 8601 in UTC, to the minute, as on the usage page.
  const listed = (await store.listKeys(account.id)).find((k) => k.name === 'ci laptop')!;
  const created = row.locator('td time').first();
  assert.equal(await created.getAttribute('datetime'), listed.createdAt.toISOString());
  assert.equal(await created.innerText(), `${listed.createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  for (const size of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    assert.deepEqual(await axeViolations(page), [], `axe at ${size.width} px`);
    assert.ok(await fitsWidth(page), `nothing scrolls sideways at ${size.width} px`);
  }
  await keepScreenshots(page, 'hosted-keys');
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
