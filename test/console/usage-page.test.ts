/**
 * The hosted usage page end to end: a real `svc hosted` process with the tiny GGUF fixture,
 * metered chat requests through the official openai client, then Chromium signed in with a
 * sign-in link: the Joules figures, the daily chart's data and the breakdowns must be the
 * ledger's numbers. axe-core, 360 px, screenshots in test-artifacts/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { CONSOLE_CSP, HOSTED_CONSOLE_PREFIX } from '../../src/console/console-routes.ts';
import { ARTIFACTS, fitsWidth, keepScreenshots, closeBrowser, launch, openPage, axeViolations, waitForExpression } from '../helpers/console-browser.ts';
import { startServerProcess, tinyModelPath } from '../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../helpers/hosted-stores.ts';

/** How the page writes Joules (joules() in console/src/pages/usage-page.tsx). */
const shown = (j: number) => `${j.toLocaleString('en-US', { maximumFractionDigits: 3 })} J`;
/** How the chart labels a bar (barLabel() in console/src/joules-chart.tsx). */
const barLabel = (j: number) => `${j.toLocaleString('en-US', { maximumFractionDigits: j >= 100 ? 0 : j >= 1 ? 1 : 3 })} J`;

/** The request the key page's curl line makes (the shape curlLine() in src/hosted/pages/api-keys.js writes). */
function curlRequest(line: string): { url: string; headers: Record<string, string>; body: string } {
  const url = /^curl (\S+)/.exec(line)?.[1];
  const body = /-d '([^']*)'/.exec(line)?.[1];
  assert.ok(url !== undefined && body !== undefined, line);
  const headers = Object.fromEntries([...line.matchAll(/-H "([^:"]+): ([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
  return { url, headers, body };
}

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
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 }, { clipboardOrigin: hosted.url });
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

  // A new key (the default scope, the one that can chat) and its quick start: this server's
  // base URL, the model the hosted API serves, and a curl line whose request answers 200.
  await page.fill('#name', 'quick start');
  await page.click('#create-button');
  await page.locator('#curl').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#base-url').innerText(), `${hosted.url}/api/v1`);
  assert.ok((await page.locator('#models code').allInnerTexts()).includes('svc-chat'), 'the hosted model name, not the weight file\'s');
  await page.screenshot({ path: join(ARTIFACTS, 'settings-api-keys-quick-start.png'), fullPage: true });
  await page.click('#copy-curl');
  await page.locator('#curl-status', { hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), await page.locator('#curl').innerText(), 'the copy button copies the curl line');
  const curl = curlRequest(await page.locator('#curl').innerText());
  assert.equal(curl.headers.Authorization, `Bearer ${await page.locator('#secret').innerText()}`);
  const answer = await fetch(curl.url, { method: 'POST', headers: curl.headers, body: curl.body });
  assert.equal(answer.status, 200, await answer.clone().text());
  await answer.body?.cancel();
  evidence.push(String(answer.headers.get('x-svc-evidence-id')));
  await page.waitForLoadState('networkidle');
  errors.length = 0;

  const month = (await store.allowance(accountId)).month;
  const ledger = await store.ledgerTotal(accountId, month);
  assert.equal(ledger.rows, 4);
  const allowance = await store.allowance(accountId);

  await page.click('a[href="/api/console/usage"]');
  await page.locator('#joules-chart canvas').waitFor();
  // The same header as the key page: API keys, Usage (this page), sign out.
  assert.deepEqual(await page.locator('header.top nav a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('aria-current')])), [['API keys', null], ['Usage', 'page']]);
  assert.ok(await page.locator('header.top #sign-out').isVisible());

  // The figures are the ledger's.
  assert.equal(await page.locator('#joules-used').innerText(), shown(ledger.joules));
  assert.equal(await page.locator('#joules-allowance').innerText(), shown(allowance.allowanceJoules));
  assert.equal(await page.locator('#joules-remaining').innerText(), shown(allowance.remainingJoules));
  assert.equal(await page.locator('#requests').innerText(), '4');
  // The chart is drawn from every day of the month, and its bars sum to the ledger.
  const days = JSON.parse(await page.locator('#joules-chart').getAttribute('data-days') ?? '[]') as number[];
  const joules = JSON.parse(await page.locator('#joules-chart').getAttribute('data-joules') ?? '[]') as number[];
  const [year, mon] = month.split('-').map(Number) as [number, number];
  assert.equal(days.length, new Date(Date.UTC(year, mon, 0)).getUTCDate());
  const report = await store.usage({ accountId, month });
  const expected = days.map((_, i) => report.daily.find((d) => Number(d.date.slice(8)) === i + 1)?.joules ?? 0);
  assert.deepEqual(joules, expected, 'each day\'s bar is that day\'s Joules in the ledger');
  assert.equal(Math.round(joules.reduce((sum, j) => sum + j, 0) * 1000), Math.round(ledger.joules * 1000));
  // Each day with usage has its label over its bar: that day's Joules.
  assert.deepEqual(JSON.parse(await page.locator('#joules-chart').getAttribute('data-bar-labels') ?? '[]'), report.daily.filter((d) => d.joules > 0).map((d) => ({ date: d.date, label: barLabel(d.joules) })));
  // Requests and tokens beside Joules: the totals, and per day, as the ledger has them.
  const rows = await Promise.all(evidence.map((id) => store.findEvidence(accountId, id)));
  const promptTokens = rows.reduce((n, r) => n + r!.promptTokens, 0);
  const completionTokens = rows.reduce((n, r) => n + r!.completionTokens, 0);
  assert.ok(promptTokens > 0 && completionTokens > 0);
  assert.equal(await page.locator('#prompt-tokens').innerText(), promptTokens.toLocaleString('en-US'));
  assert.equal(await page.locator('#completion-tokens').innerText(), completionTokens.toLocaleString('en-US'));
  assert.deepEqual(await page.locator('#daily tbody tr').allInnerTexts(), report.daily.map((d) => [d.date, d.requests, d.promptTokens, d.completionTokens, shown(d.joules)].join('\t')));

  // Per key (named from /api/keys) and per project, from the ledger.
  const keyRows = await page.locator('#per-key tbody tr').allInnerTexts();
  assert.equal(keyRows.length, 3);
  const keys = await store.listKeys(accountId);
  for (const k of report.keys) {
    const name = keys.find((key) => key.id === k.keyId)?.name ?? null;
    const row = keyRows.find((r) => name === null ? !/batch jobs|quick start/.test(r) : r.includes(name))!;
    assert.ok(row.includes(`\t${k.requests}\t${k.promptTokens}\t${k.completionTokens}\t${shown(k.joules)}\t`), `${row} has requests, tokens and Joules of the ledger`);
  }
  for (const p of report.projects) {
    const row = await page.locator('#per-project tbody tr', { hasText: p.projectId }).innerText();
    assert.ok(row.includes(`\t${p.requests}\t${p.promptTokens}\t${p.completionTokens}\t${shown(p.joules)}\t`), row);
  }
  assert.deepEqual((await page.locator('#per-project tbody th').allInnerTexts()).sort(), ['etl', 'web']);
  // The recent evidence: every request, newest first, with its billable Joules and the route's
  // facts, and (from GET /api/v1/evidence/:id) its outcome, tokens, estimated and measured Joules.
  assert.deepEqual(await page.locator('#recent-evidence tbody tr').evaluateAll((trs) => trs.map((r) => r.getAttribute('data-evidence'))), [...evidence].reverse());
  for (const [i, id] of evidence.entries()) {
    const e = rows[i]!;
    const row = page.locator(`#recent-evidence tr[data-evidence="${id}"]`);
    const cell = (field: string) => row.locator(`td[data-field="${field}"]`).innerText();
    assert.deepEqual(
      [await cell('outcome'), await cell('prompt-tokens'), await cell('completion-tokens'), await cell('joules'), await cell('estimated-joules'), await cell('measured-joules')],
      [e.outcome, String(e.promptTokens), String(e.completionTokens), shown(e.route.billable_joules), shown(e.route.estimated_joules), e.route.raw_joules === null ? 'not measured' : shown(e.route.raw_joules)],
    );
  }
  const newest = rows[2]!;
  const newestRow = await page.locator(`#recent-evidence tr[data-evidence="${evidence[2]}"]`).innerText();
  for (const field of [newest.route.policy, newest.route.execution_plane, newest.route.provider, `${newest.route.latency_ms} ms`, 'etl']) {
    assert.ok(newestRow.includes(field), `${field} in ${newestRow}`);
  }
  // The evidence table scrolls inside its panel; the panel itself stays in the page.
  const fitsPanel = async () => await page.evaluate("(() => { const p = document.querySelector('.evidence-panel'); return p.scrollWidth <= p.clientWidth && p.getBoundingClientRect().right <= window.innerWidth; })()") === true;
  assert.ok(await fitsPanel(), 'the evidence table stays inside its panel at 1280 px');
  assert.equal(await page.locator('a[href="../../settings/api-keys"]').first().getAttribute('href'), '../../settings/api-keys');
  assert.deepEqual(await axeViolations(page), [], 'axe at 1280 px');
  await keepScreenshots(page, 'hosted-usage');
  // At 390 px nothing scrolls sideways: the wide tables scroll inside their panels.
  await page.setViewportSize({ width: 390, height: 844 });
  // The chart follows the narrower page without a reload.
  await waitForExpression(page, "document.querySelector('#joules-chart canvas').getBoundingClientRect().width <= document.querySelector('#joules-chart').clientWidth");
  await page.reload();
  await page.locator('#recent-evidence tbody tr').first().waitFor();
  assert.ok(await fitsWidth(page), 'the usage page scrolls sideways at 390 px');
  assert.ok(await fitsPanel(), 'the evidence table stays inside its panel at 390 px');
  assert.deepEqual(await axeViolations(page), [], 'axe at 390 px');
  assert.deepEqual(errors, []);

  // Sign out from the header: the page says so, and usage is no longer readable with the cookie.
  await page.click('#sign-out');
  await page.locator('#signed-out').waitFor();
  assert.equal((await context.request.get(`${hosted.url}/api/v1/usage`)).status(), 401);
  await context.close();
});
