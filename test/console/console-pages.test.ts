/**
 * The console end to end: a real `svc serve` process with the tiny GGUF fixture, driven by
 * Debian's headless Chromium. Each page must load with no console error, script error or CSP
 * violation, pass axe-core with no serious or critical violation, and fit a 360 px wide screen;
 * a chat must stream into the page and a route solve must be drawn in the order the API returned.
 * Screenshots go to test-artifacts/ (as the account pages' test does).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { CONSOLE_CSP } from '../../src/console/console-routes.ts';
import { ARTIFACTS, fitsWidth, closeBrowser, launch, openPage, axeViolations, solveOnPage, watchErrors } from '../helpers/console-browser.ts';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { prepareHostedDataDir } from '../helpers/hosted-stores.ts';

test('the console is served at / with its CSP, index revalidated, hashed assets immutable, nothing external', async (t) => {
  const daemon = await startDaemon();
  t.after(() => daemon.stop());
  const index = await fetch(`${daemon.url}/`);
  assert.equal(index.status, 200);
  assert.match(String(index.headers.get('content-type')), /^text\/html/);
  assert.equal(index.headers.get('cache-control'), 'no-cache');
  assert.equal(index.headers.get('content-security-policy'), CONSOLE_CSP);
  assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(index.headers.get('x-frame-options'), 'DENY');
  const html = await index.text();
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]|\son\w+=/, 'no inline script or handler');
  const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `index names its script and style: ${assets.join(', ')}`);
  for (const asset of assets) {
    assert.match(asset, /-[A-Za-z0-9_-]{8}\.(js|css)$/, 'asset names carry a content hash');
    const response = await fetch(`${daemon.url}/${asset}`);
    assert.equal(response.status, 200, asset);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable', asset);
    // marked's own error text names its issue tracker ("Please report this to https://github.com/markedjs/marked."): words, never a load.
    assert.doesNotMatch(await response.text(), /https?:\/\/(?!www\.w3\.org\/|github\.com\/markedjs\/marked\.)[a-z]/i, `${asset} loads nothing from another host`);
  }
  // Other paths stay the daemon's 404 in the envelope; the folder is not a door to the disk.
  for (const path of ['/assets/nope.js', '/%2e%2e/package.json', '/assets/%2e%2e/%2e%2e/console-routes.ts', '/console', '/usage.html']) {
    const response = await fetch(`${daemon.url}${path}`);
    assert.equal(response.status, 404, path);
    assert.match(String(response.headers.get('content-type')), /^application\/json/, path);
  }
  // The loopback guard covers the console like the API: a rebinding page's Origin is refused.
  const rebinding = await fetch(`${daemon.url}/`, { headers: { origin: 'http://evil.example' } });
  assert.equal(rebinding.status, 403);
});

/** Opens the chat page, sends "Say hello" to the fixture model and waits for the reply to end. */
async function chatOnce(page: Page, daemon: DaemonProcess): Promise<void> {
  await page.goto(`${daemon.url}/#/chat`);
  await page.locator('#chat-model option', { hasText: 'tiny' }).waitFor({ state: 'attached' });
  await page.fill('#chat-max-tokens', '12');
  await page.fill('#chat-prompt', 'Say hello');
  await page.click('#chat-send');
  await page.locator('#chat-send:not([disabled])').waitFor({ timeout: 60_000 });
}

test('in headless Chromium: runtime, chat, route and portfolio solver pages, at 1100 and 360 px', { timeout: 180_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const daemon: DaemonProcess = await startDaemon();
  t.after(() => daemon.stop());

  await t.test('runtime page: health at a glance and the model table', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 800 });
    await page.goto(`${daemon.url}/`);
    await page.locator('[data-testid="status"]', { hasText: 'ok' }).waitFor();
    assert.equal(await page.locator('[data-testid="loopback"]').innerText(), 'yes');
    assert.match(await page.locator('[data-testid="listen"]').innerText(), new RegExp(daemon.url.replace(/[.]/g, '\\.')));
    assert.equal(await page.locator('[data-testid="telemetry"]').innerText(), 'none');
    assert.equal(await page.locator('[data-testid="outbound"]').innerText(), '0');
    assert.match(await page.locator('[data-testid="pqc"]').innerText(), /off/);
    const row = page.locator('#models tbody tr', { hasText: 'tiny' });
    await row.waitFor();
    // Model, Residency (state and button), Memory in use (none until loaded), Size on disk, Quantization.
    assert.match(await row.innerText(), /tiny\s+not-loaded\s+Load\s+—\s+\d+(\.\d)? KB\s+\S+/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-runtime.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('runtime page: Load shows the model loaded, Unload shows it not loaded, as /v1/models says', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 800 });
    const stateFromApi = async () => ((await (await fetch(`${daemon.url}/v1/models/tiny`)).json()) as { state: string }).state;
    await page.goto(`${daemon.url}/`);
    const row = page.locator('#models tr[data-model="tiny"]');
    await row.locator('[data-model-action="load"]').waitFor();
    assert.equal(await row.locator('[data-testid="model-state"]').innerText(), 'not-loaded');
    assert.equal(await stateFromApi(), 'not-loaded');
    await row.locator('[data-model-action="load"]').click();
    await row.locator('[data-testid="model-state"]', { hasText: /^loaded$/ }).waitFor({ timeout: 60_000 });
    await row.locator('[data-model-action="unload"]').waitFor();
    assert.equal(await stateFromApi(), 'loaded');
    await page.screenshot({ path: join(ARTIFACTS, 'console-runtime-loaded.png'), fullPage: true });
    await row.locator('[data-model-action="unload"]').click();
    await row.locator('[data-testid="model-state"]', { hasText: 'not-loaded' }).waitFor({ timeout: 60_000 });
    await row.locator('[data-model-action="load"]').waitFor();
    assert.equal(await stateFromApi(), 'not-loaded');
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('chat page: a streamed reply renders with TTFT, tokens/s and the request as curl', async () => {
    // A reply whose every chunk reaches the page in one read (the tiny model is fast; the browser's
    // clock is coarse) has no decode time to measure, and the page says so ('—'): that turn is
    // asked again on a fresh page, up to three times, so the rate itself is still checked.
    let opened = await openPage(browser, { width: 1100, height: 900 }, { clipboardOrigin: daemon.url });
    for (let attempt = 1; ; attempt++) {
      // The reply streams in: the assistant message exists while the Stop button is live, then stays.
      await chatOnce(opened.page, daemon);
      if (attempt === 3 || await opened.page.locator('#tokens-per-second').innerText() !== '—') break;
      await opened.context.close();
      opened = await openPage(browser, { width: 1100, height: 900 }, { clipboardOrigin: daemon.url });
    }
    const { context, page, errors } = opened;
    const reply = page.locator('#messages li.assistant');
    assert.equal(await reply.count(), 1);
    assert.ok((await reply.innerText()).replace(/^assistant\s*/i, '').length > 0, 'the reply has text');
    assert.match(await page.locator('#ttft').innerText(), /^\d+ ms$/);
    assert.match(await page.locator('#completion-tokens').innerText(), /^\d+$/);
    assert.match(await page.locator('#tokens-per-second').innerText(), /^\d+\.\d$/);
    assert.equal(await page.locator('.chart canvas').count(), 1, 'uPlot drew the stream');
    assert.deepEqual(await page.locator('#chat-error').count(), 0);

    await page.click('#copy-curl');
    const curl = await page.locator('#snippet').innerText();
    assert.match(curl, new RegExp(`^curl -N '${daemon.url.replace(/[.]/g, '\\.')}/v1/chat/completions'`));
    const body = JSON.parse(/-d '(.*)'$/s.exec(curl)![1]!) as { model: string; messages: { role: string; content: string }[]; stream: boolean };
    assert.equal(body.model, 'tiny');
    assert.equal(body.stream, true);
    assert.deepEqual(body.messages.map((m) => m.role), ['user', 'assistant']);
    await page.click('#copy-snippet');
    await page.locator('#copy-status', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), curl);
    await page.click('#copy-openai-js');
    assert.match(await page.locator('#snippet').innerText(), /new OpenAI\(\{ baseURL: ".*\/v1", apiKey: 'none' \}\)/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-chat.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('chat page: a turn that fails is not kept in the history, and its prompt comes back', async () => {
    const { context, page } = await openPage(browser, { width: 1100, height: 900 });
    await chatOnce(page, daemon);
    const roles = () => page.locator('#messages li').evaluateAll((items) => items.map((li) => li.className));
    assert.deepEqual(await roles(), ['message user', 'message assistant']);
    // The daemon is gone for the next turn (the browser cannot connect).
    await page.route('**/v1/chat/completions', (route) => route.abort('connectionrefused'));
    await page.fill('#chat-prompt', 'Second turn');
    await page.click('#chat-send');
    await page.locator('#chat-error').waitFor();
    await page.locator('#chat-send:not([disabled])').waitFor();
    assert.deepEqual(await roles(), ['message user', 'message assistant']);
    assert.equal(await page.inputValue('#chat-prompt'), 'Second turn');
    await context.close();
  });

  await t.test('route solver page: the solve is drawn with its stops in the order the API returned', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/solve/routes`);
    const answer = await solveOnPage<{ solution: { route: string[]; classical_optimum: number }; meta: { shots: number } }>(page, '#route-solve', '#route-map');
    const route = answer.solution.route;
    assert.equal(route.length, 6, 'depot, 4 stops, depot');
    for (const [i, id] of route.slice(1, -1).entries()) {
      assert.equal(await page.locator(`#route-map [data-stop="${id}"]`).getAttribute('data-order'), String(i + 1), `stop ${id} is drawn as number ${i + 1}`);
    }
    assert.equal(await page.locator('#route-map line.leg').count(), 5, 'one leg per hop, back to the depot');
    // Figures rounded for reading (the exact ones are in the raw response).
    assert.equal(await page.locator('#route-optimum').innerText(), `${answer.solution.classical_optimum.toLocaleString('en-US', { maximumFractionDigits: 2 })} km`);
    assert.equal(await page.locator('#route-meta-shots').innerText(), answer.meta.shots.toLocaleString('en-US'));
    await page.screenshot({ path: join(ARTIFACTS, 'console-route-solver.png'), fullPage: true });

    // A problem the API refuses shows the envelope's message, not a broken page. Chromium logs
    // the 422 itself as a console error: that one, and only that one, is expected here.
    const before = errors.length;
    await page.click('#route-raw summary');
    await page.fill('#route-problem', JSON.stringify({ type: 'route_optimization', nodes: [], constraints: { max_distance_km: 10, vehicle_count: 1 } }));
    await page.click('#route-solve');
    const refusal = await page.locator('#route-error').innerText();
    assert.match(refusal, /nodes/, refusal);
    const logged = errors.splice(before);
    assert.ok(logged.length <= 1 && logged.every((e) => /status of 422/.test(e)), logged.join('\n'));
    // Invalid JSON never reaches the API.
    await page.fill('#route-problem', '{ not json');
    await page.click('#route-solve');
    await page.locator('#route-error', { hasText: 'not valid' }).waitFor();
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('portfolio solver page: the answer on the risk/return plane, with its certificate', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/solve/portfolio`);
    const answer = await solveOnPage<{ solution: { selected: string[]; expected_return: number; risk: number; optimality_gap: number } }>(page, '#portfolio-solve', '#portfolio-chart canvas');
    assert.ok(answer.solution.selected.length > 0);
    assert.equal(await page.locator('#portfolio-selected strong').innerText(), answer.solution.selected.join(', '));
    assert.equal(await page.locator('#portfolio-return').innerText(), `${(answer.solution.expected_return * 100).toFixed(1)} %`);
    assert.equal(await page.locator('#portfolio-risk').innerText(), `${(answer.solution.risk * 100).toFixed(1)} %`);
    // An absolute gap in objective units (a percentage would show a small one as 0.0 %), to 4 decimals.
    assert.equal(await page.locator('#portfolio-gap').innerText(), `${answer.solution.optimality_gap.toLocaleString('en-US', { maximumFractionDigits: 4 })} (objective units)`);
    await page.screenshot({ path: join(ARTIFACTS, 'console-portfolio-solver.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('every page fits a 360 px wide screen', async () => {
    const { context, page, errors } = await openPage(browser, { width: 360, height: 740 }, { mobile: true });
    const pages = [
      { hash: '#/', ready: '#models', name: 'runtime' },
      { hash: '#/chat', ready: '#chat-prompt', name: 'chat' },
      { hash: '#/solve/routes', ready: '#route-solve', name: 'route-solver', solve: ['#route-solve', '#route-map'] },
      { hash: '#/solve/portfolio', ready: '#portfolio-solve', name: 'portfolio-solver', solve: ['#portfolio-solve', '#portfolio-chart canvas'] },
    ] as const;
    for (const { hash, ready, name, ...rest } of pages) {
      await page.goto(`${daemon.url}/${hash}`);
      await page.locator(ready).waitFor();
      if ('solve' in rest) {
        await page.click(rest.solve[0]);
        await page.locator(rest.solve[1]).waitFor({ timeout: 60_000 });
      }
      assert.ok(await fitsWidth(page), `${name} scrolls sideways at 360 px`);
      await page.screenshot({ path: join(ARTIFACTS, `console-${name}-360.png`), fullPage: true });
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
});

test('over --pqc-transport: Chromium negotiates X25519MLKEM768 and the runtime page says so', { timeout: 120_000 }, async (t) => {
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  // An ECDSA certificate: Chromium verifies no ML-DSA signature yet; the key exchange is what is post-quantum.
  const daemon = await startDaemon({ args: ['--pqc-transport', 'ml-kem-768', '--host', '127.0.0.1'], withModel: false });
  t.after(() => daemon.stop());
  assert.match(daemon.url, /^https:/);
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${daemon.url}/`);
  await page.locator('[data-testid="status"]', { hasText: 'ok' }).waitFor();
  assert.equal(await page.locator('[data-testid="pqc"]').innerText(), 'ml-kem-768');
  assert.equal(await page.locator('[data-testid="tls"]').innerText(), 'TLSv1.3');
  assert.match(await page.locator('[data-testid="cipher"]').innerText(), /^TLS_AES_\w+, group X25519MLKEM768, ecdsa-p256 certificate$/);
  await page.screenshot({ path: join(ARTIFACTS, 'console-runtime-pqc.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('with --require-developer-key: the page loads, asks for a key once, keeps it for the tab and sends it', { timeout: 120_000 }, async (t) => {
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const hosted = await prepareHostedDataDir(t, 'console-keys');
  const account = await hosted.store.createAccount({ name: 'console', plan: { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false } });
  const { secret } = await hosted.store.issueKey(account.id, { scope: 'developer_runtime', name: 'console' });
  const daemon = await startDaemon({ args: ['--developer-keys', hosted.dataDir, '--require-developer-key'] });
  t.after(() => daemon.stop());
  // The page and its assets need no key; the API still does.
  assert.equal((await fetch(`${daemon.url}/`)).status, 200);
  assert.equal((await fetch(`${daemon.url}/v1/models`)).status, 401);

  const { context, page } = await openPage(browser, { width: 1100, height: 800 });
  const sent: (string | null)[] = [];
  page.on('request', (request) => { if (request.url().endsWith('/v1/models')) sent.push(request.headers()['authorization'] ?? null); });
  await page.goto(`${daemon.url}/`);
  await page.locator('#developer-key-prompt').waitFor();
  assert.match(await page.locator('#developer-key-prompt [role="alert"]').innerText(), /--require-developer-key/);
  assert.equal(sent[0], null, 'the first call went without a key');
  await page.screenshot({ path: join(ARTIFACTS, 'console-developer-key.png'), fullPage: true });
  assert.deepEqual(await axeViolations(page), []);

  // A wrong key is said to be wrong.
  await page.fill('#developer-key', 'svc_dk_not-a-real-key');
  await page.click('#developer-key-save');
  await page.locator('#developer-key-prompt', { hasText: 'not valid' }).waitFor();

  await page.fill('#developer-key', secret);
  await page.click('#developer-key-save');
  await page.locator('#models tr[data-model="tiny"]').waitFor();
  assert.equal(await page.locator('#developer-key-prompt').count(), 0);
  assert.equal(sent.at(-1), `Bearer ${secret}`);
  assert.equal(await page.evaluate("sessionStorage.getItem('svc.developerKey')"), secret);
  assert.equal(await page.evaluate('localStorage.length'), 0, 'the key is kept for the tab only');
  // Another page of the console in the same tab keeps it; a chat goes through with it.
  await chatOnce(page, daemon);
  assert.equal(await page.locator('#chat-error').count(), 0);
  assert.equal(await page.locator('#messages li.assistant').count(), 1);

  await page.click('#developer-key-forget');
  await page.locator('#developer-key-prompt').waitFor();
  assert.equal(await page.evaluate("sessionStorage.getItem('svc.developerKey')"), null);
  await context.close();
});
