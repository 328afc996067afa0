/**
 * The hosted usage page end to end: a real `svc hosted` process with the tiny GGUF fixture,
 * metered chat requests through the official openai client, then Chromium signed in with a
 * sign-in link: the Joules figures, the daily chart's data and the breakdowns must be the
 * ledger's numbers. axe-core, 360 px, screenshots in test-artifacts/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { CONSOLE_CSP, HOSTED_CONSOLE_PREFIX } from '../../src/console/console-routes.ts';
import { ARTIFACTS, fitsWidth, launch, openPage, axeViolations } from '../helpers/console-browser.ts';
import { startServerProcess, tinyModelPath } from '../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../helpers/hosted-stores.ts';

/** How the page writes Joules (joules() in console/src/pages/usage-page.tsx). */
const shown = (j: number) => `${j.toLocaleString('en-US', { maximumFractionDigits: 3 })} J`;

test('svc hosted serves the usage page under /api/console with the console CSP; other paths are the hosted 404', async (t) => {
  const { dataDir } = await prepareHostedDataDir(t, 'usage-static');
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir]);
  t.after(() => hosted.stop());
  const page = await fetch(`${hosted.url}${HOSTED_CONSOLE_PREFIX}/usage`);
  assert.equal(page.status, 200);
  assert.match(String(page.headers.get('content-type')), /^text\/html/);
  assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.ok(assets.length >= 2, html);
  for (const asset of assets) {
    const response = await fetch(`${hosted.url}${HOSTED_CONSOLE_PREFIX}/${asset}`);
    assert.equal(response.status, 200, asset);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    await response.body?.cancel();
  }
  for (const path of ['/assets/nope.js', '/index.html', '/', '/usage.html', '/assets/%2e%2e/usage.html']) {
    const response = await fetch(`${hosted.url}${HOSTED_CONSOLE_PREFIX}${path}`);
    assert.equal(response.status, 404, path);
    const body = await response.json() as { error: { code: string; docs_url: string } };
    assert.equal(body.error.code, 'unknown_route', path);
  }
});

test('in headless Chromium: after metered chats the usage page shows the ledger\'s Joules, per day, key and project, and the evidence', { timeout: 180_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const { dataDir, store, accountId, secret } = await prepareHostedDataDir(t, 'usage-page');
  const second = await store.issueKey(accountId, { scope: 'supercomputer', name: 'batch jobs', project: 'etl' });
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', tinyModelPath()]);
  t.after(() => hosted.stop());

  const evidence: string[] = [];
  for (const [key, project] of [[secret, 'web'], [secret, null], [second.secret, 'etl']] as const) {
    const client = new OpenAI({ apiKey: key, baseURL: `${hosted.url}/api/v1`, maxRetries: 0, defaultHeaders: project === null ? {} : { 'x-svc-project-id': project } });
    const completion = await client.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 });
    evidence.push((completion as unknown as { svc_route: { evidence_id: string } }).svc_route.evidence_id);
  }
  const month = (await store.allowance(accountId)).month;
  const ledger = await store.ledgerTotal(accountId, month);
  assert.equal(ledger.rows, 3);
  const allowance = await store.allowance(accountId);

  const browser = await launch();
  t.after(() => browser.close());
  const { context, page, errors } = await openPage(browser, { width: 1200, height: 900 });
  // Not signed in: the page says so and points at the key page; the 401 Chromium logs is expected.
  await page.goto(`${hosted.url}${HOSTED_CONSOLE_PREFIX}/usage`);
  await page.locator('#signed-out').waitFor();
  assert.ok(errors.every((e) => /status of 401/.test(e)), errors.join('\n'));
  errors.length = 0;

  const { token } = await store.createSignInToken(accountId, 60_000);
  await page.goto(`${hosted.url}/api/session/sign-in?token=${token}`);
  await page.click('#sign-in');
  await page.waitForURL(`${hosted.url}/settings/api-keys`);
  // What the sign-in and key pages log (their favicon's 404, the sign-in fetch cut short by
  // the page moving on) is theirs (test/hosted/pages); from here on the usage page is watched.
  await page.waitForLoadState('networkidle');
  errors.length = 0;
  await page.click('a[href="/api/console/usage"]');
  await page.locator('#joules-chart canvas').waitFor();

  // The figures are the ledger's.
  assert.equal(await page.locator('#joules-used').innerText(), shown(ledger.joules));
  assert.equal(await page.locator('#joules-allowance').innerText(), shown(allowance.allowanceJoules));
  assert.equal(await page.locator('#joules-remaining').innerText(), shown(allowance.remainingJoules));
  assert.equal(await page.locator('#requests').innerText(), '3');
  // The chart is drawn from every day of the month, and its bars sum to the ledger.
  const days = JSON.parse(await page.locator('#joules-chart').getAttribute('data-days') ?? '[]') as number[];
  const joules = JSON.parse(await page.locator('#joules-chart').getAttribute('data-joules') ?? '[]') as number[];
  const [year, mon] = month.split('-').map(Number) as [number, number];
  assert.equal(days.length, new Date(Date.UTC(year, mon, 0)).getUTCDate());
  const report = await store.usage({ accountId, month });
  const expected = days.map((_, i) => report.daily.find((d) => Number(d.date.slice(8)) === i + 1)?.joules ?? 0);
  assert.deepEqual(joules, expected, 'each day\'s bar is that day\'s Joules in the ledger');
  assert.equal(Math.round(joules.reduce((sum, j) => sum + j, 0) * 1000), Math.round(ledger.joules * 1000));

  // Per key (named from /api/keys) and per project, from the ledger.
  const keyRows = await page.locator('#per-key tbody tr').allInnerTexts();
  assert.equal(keyRows.length, 2);
  for (const k of report.keys) {
    const row = keyRows.find((r) => k.keyId === second.key.id ? r.includes('batch jobs') : !r.includes('batch jobs'))!;
    assert.match(row, new RegExp(`\\t${k.requests}\\t${shown(k.joules).replace(/[.]/g, '\\.')}`), row);
  }
  assert.deepEqual((await page.locator('#per-project tbody th').allInnerTexts()).sort(), ['etl', 'web']);
  // The recent evidence: every request, newest first, with its Joules and the route's
  // non-billing facts; no per-request billing event (outcome, tokens), which usage does not expose.
  assert.deepEqual(await page.locator('#recent-evidence tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-evidence'))), [...evidence].reverse());
  const newest = await store.findEvidence(accountId, evidence[2]!);
  const newestRow = await page.locator(`#recent-evidence tr[data-evidence="${evidence[2]}"]`).innerText();
  for (const field of [newest!.route.policy, newest!.route.execution_plane, newest!.route.provider, `${newest!.route.latency_ms} ms`, shown(newest!.route.billable_joules), 'etl']) {
    assert.ok(newestRow.includes(field), `${field} in ${newestRow}`);
  }
  assert.ok(!newestRow.includes(newest!.outcome), `no outcome in ${newestRow}`);
  assert.equal(await page.locator('a[href="../../settings/api-keys"]').first().getAttribute('href'), '../../settings/api-keys');
  await page.screenshot({ path: join(ARTIFACTS, 'console-hosted-usage.png'), fullPage: true });
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(errors, []);
  await context.close();

  // At 360 px, signed in (the cookie goes with the context), nothing scrolls sideways.
  const mobile = await openPage(browser, { width: 360, height: 740 }, { mobile: true });
  const { token: again } = await store.createSignInToken(accountId, 60_000);
  await mobile.page.goto(`${hosted.url}/api/session/sign-in?token=${again}`);
  await mobile.page.click('#sign-in');
  await mobile.page.waitForURL(`${hosted.url}/settings/api-keys`);
  await mobile.page.waitForLoadState('networkidle');
  mobile.errors.length = 0;
  await mobile.page.goto(`${hosted.url}${HOSTED_CONSOLE_PREFIX}/usage`);
  await mobile.page.locator('#joules-chart canvas').waitFor();
  assert.ok(await fitsWidth(mobile.page), 'the usage page scrolls sideways at 360 px');
  await mobile.page.screenshot({ path: join(ARTIFACTS, 'console-hosted-usage-360.png'), fullPage: true });
  assert.deepEqual(mobile.errors, []);
  await mobile.context.close();
});
