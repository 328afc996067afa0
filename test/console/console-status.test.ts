/**
 * Honest status in the console (issue 28), in headless Chromium against a real `svc serve`:
 * the Runtime page's models table (a Residency column holding Load/Unload, sources in words,
 * memory in use for a loaded model, "1 thread" not "1 threads"), the Load button on screen at
 * 390 px, and an outage: with the daemon stopped, every open page says so in words under one
 * banner and greys what it shows (no green "ok" or "loaded" left), and once a daemon answers
 * on the same port again the banner goes and the data is read again, with no reload.
 * Screenshots at 1280 and 390 px go to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, fitsWidth, closeBrowser, launch, openPage, axeViolations } from '../helpers/console-browser.ts';
import { startServerProcess, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';
import { freePort } from '../helpers/free-port.ts';

const HEADERS = ['Model', 'Residency', 'Memory in use', 'Size on disk', 'Quantization', 'Parameters', 'Context', 'Source'];

/** Errors a page may log while the daemon is down: the browser's own line for each refused request. */
function outageNoise(error: string): boolean {
  return /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|net::ERR_FAILED|Failed to load resource/.test(error);
}

async function headers(page: Page): Promise<string[]> {
  return (await page.locator('#models thead th').allInnerTexts()).map((h) => h.trim());
}

test('console status: runtime table labels, Load on a phone, an outage said on every page and recovered from', { timeout: 240_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  // A fixed port and data dir, so a second daemon can take the first one's place.
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-console-status-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const serve = () => startServerProcess(['serve', '--port', String(port), '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`]);
  let daemon: DaemonProcess = await serve();
  t.after(() => daemon.stop());

  await t.test('runtime page at 1280 px: Residency column, sources in words, memory in use, plural words', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/`);
    await page.locator('[data-testid="status"]', { hasText: 'ok' }).waitFor();
    const row = page.locator('#models tr[data-model="tiny"]');
    await row.waitFor();
    assert.deepEqual(await headers(page), HEADERS);
    // The button sits in the column headed Residency, beside the state it changes.
    const residencyIndex = HEADERS.indexOf('Residency');
    const cells = row.locator('th, td');
    assert.equal(await cells.nth(residencyIndex).locator('[data-model-action="load"]').count(), 1);
    assert.equal(await row.locator('[data-testid="model-source"]').innerText(), 'command line (--model)');
    assert.equal(await row.locator('[data-testid="model-memory"]').innerText(), '—', 'no memory in use while not loaded');
    assert.match(await row.innerText(), /\d[\d,]* tokens/);
    const engine = await page.locator('.fact', { hasText: 'Engine' }).innerText();
    assert.match(engine, /llama\.cpp, (1 thread|\d+ threads), (1 CPU|\d+ CPUs)/);
    assert.doesNotMatch(engine, /\b1 threads\b|\b1 CPUs\b/);

    await row.locator('[data-model-action="load"]').click();
    await row.locator('[data-testid="model-state"]', { hasText: /^loaded$/ }).waitFor({ timeout: 60_000 });
    const api = (await (await fetch(`${daemon.url}/v1/models/tiny`)).json()) as { memory_bytes: number | null };
    assert.ok(typeof api.memory_bytes === 'number' && api.memory_bytes > 0, `memory_bytes ${api.memory_bytes}`);
    assert.match(await row.locator('[data-testid="model-memory"]').innerText(), /^\d+(\.\d)? (B|KB|MB|GB)$/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-status-runtime-1280.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    await row.locator('[data-model-action="unload"]').click();
    await row.locator('[data-testid="model-state"]', { hasText: 'not-loaded' }).waitFor({ timeout: 60_000 });
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('runtime page at 390 px: the Load button is on screen without scrolling the table sideways', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 }, { mobile: true });
    await page.goto(`${daemon.url}/`);
    const button = page.locator('#models tr[data-model="tiny"] [data-model-action="load"]');
    await button.waitFor();
    await button.scrollIntoViewIfNeeded();
    const box = await button.boundingBox();
    assert.ok(box !== null);
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `Load button at x ${box.x}..${box.x + box.width} of a 390 px screen`);
    const scrolled = await page.evaluate("document.querySelector('.table-scroll').scrollLeft") as number;
    assert.equal(scrolled, 0, 'reached without scrolling the table');
    assert.ok(await fitsWidth(page), 'the page fits 390 px');
    await page.screenshot({ path: join(ARTIFACTS, 'console-status-runtime-390.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('daemon stopped: banner and greyed data on Runtime and Spaces; restarted on the same port: recovered by itself', async () => {
    const runtime = await openPage(browser, { width: 1280, height: 800 });
    const spaces = await openPage(browser, { width: 390, height: 844 }, { mobile: true });
    await runtime.page.goto(`${daemon.url}/`);
    const row = runtime.page.locator('#models tr[data-model="tiny"]');
    await row.locator('[data-model-action="load"]').click();
    await row.locator('[data-testid="model-state"]', { hasText: /^loaded$/ }).waitFor({ timeout: 60_000 });
    await spaces.page.goto(`${daemon.url}/#/spaces`);
    await spaces.page.locator('#spaces-panel[aria-busy="false"]').waitFor();
    assert.equal(await runtime.page.locator('#connection-banner').count(), 0);

    await daemon.stop();
    for (const { page } of [runtime, spaces]) {
      // The probe runs every 5 s while the daemon answers; the first one after the stop finds it gone.
      await page.locator('#connection-banner').waitFor({ timeout: 20_000 });
      const banner = await page.locator('#connection-banner').innerText();
      assert.match(banner, /The daemon is not answering/);
      assert.match(banner, /Trying again/);
      assert.doesNotMatch(banner, /Failed to fetch/);
      assert.equal(await page.locator('#page-body.stale[data-stale="true"]').count(), 1, 'the page is greyed');
      assert.doesNotMatch(await page.locator('main').innerText(), /Failed to fetch/);
    }
    // Nothing green is left standing on the Runtime page: not the health, not the model's state.
    await runtime.page.locator('[data-testid="status"]', { hasText: 'not answering' }).waitFor();
    assert.equal(await row.locator('[data-testid="model-state"]').innerText(), 'unknown');
    assert.equal(await runtime.page.locator('.badge.ok').count(), 0);
    assert.ok(await row.locator('[data-model-action]').isDisabled(), 'no Load/Unload to a daemon that is not there');
    await runtime.page.screenshot({ path: join(ARTIFACTS, 'console-status-offline-1280.png'), fullPage: true });
    await spaces.page.screenshot({ path: join(ARTIFACTS, 'console-status-offline-390.png'), fullPage: true });
    assert.deepEqual(await axeViolations(runtime.page), []);
    assert.deepEqual(await axeViolations(spaces.page), []);

    daemon = await serve();
    for (const { page } of [runtime, spaces]) {
      // Backoff: 1, 2, 4, 8, then every 15 s at most, so the banner goes within about 20 s.
      await page.locator('#connection-banner').waitFor({ state: 'detached', timeout: 40_000 });
      assert.equal(await page.locator('#page-body.stale').count(), 0);
    }
    // Read again, not the old answer: the new daemon has not loaded the model.
    await runtime.page.locator('[data-testid="status"]', { hasText: /^ok$/ }).waitFor({ timeout: 10_000 });
    await row.locator('[data-testid="model-state"]', { hasText: 'not-loaded' }).waitFor({ timeout: 10_000 });
    await spaces.page.locator('#spaces-panel[aria-busy="false"]').waitFor();
    assert.equal(await spaces.page.locator('#spaces-error').count(), 0, 'the outage error is gone with the outage');
    for (const { errors } of [runtime, spaces]) assert.deepEqual(errors.filter((e) => !outageNoise(e)), []);
    await runtime.context.close();
    await spaces.context.close();
  });
});
