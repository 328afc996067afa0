/**
 * Pulling and deleting models from the console's Runtime page (issue 28), in headless Chromium
 * against a real `svc serve` whose hub is the mock hub (test/helpers/mock-hub.ts): the progress
 * bar with bytes and percent, the new row in the table without a reload, Cancel, a bad
 * reference said in words, and Delete with its confirmation. Axe finds nothing at any level;
 * screenshots at 1280 and 390 px go to test-artifacts/console-runtime-models-*.png.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ARTIFACTS, axeViolations, fitsWidth, keepScreenshots, closeBrowser, launch, openPage, waitForExpression } from '../helpers/console-browser.ts';
import { startServerProcess, tinyModelPath } from '../helpers/daemon-process.ts';
import { startMockHub } from '../helpers/mock-hub.ts';
import { buildTinyGguf } from '../helpers/tiny-gguf.ts';

const q4 = buildTinyGguf({ seed: 31 });
const q8 = buildTinyGguf({ seed: 32 });
const PULLED = 'hf:acme/Tiny-GGUF/tiny-Q4_K_M';

/** The browser's own line for a request the page cancelled on purpose (the Cancel button). */
const cancelNoise = (error: string) => /ERR_ABORTED/.test(error);

test('console models: pull with a progress bar, the new row, cancel, a bad reference, delete with confirmation', { timeout: 240_000 }, async (t) => {
  const hub = await startMockHub({ repos: [{ owner: 'acme', repo: 'Tiny-GGUF', files: { 'tiny-Q4_K_M.gguf': q4, 'tiny-Q8_0.gguf': q8 } }] });
  t.after(() => hub.close());
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-console-models-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const daemon = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`], { env: { HF_ENDPOINT: hub.url, HF_TOKEN: '' } });
  t.after(() => daemon.stop());
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
  t.after(() => context.close());
  await page.goto(`${daemon.url}/`);
  await page.locator('#models tr[data-model="tiny"]').waitFor();
  // A --model file is the user's: no Delete for it.
  assert.equal(await page.locator('#models tr[data-model="tiny"] [data-model-action="delete"]').count(), 0);

  await t.test('a bad reference is said in words, inline', async () => {
    await page.fill('#pull-reference', 'not a model');
    await page.click('[data-testid="pull"]');
    const error = page.locator('[data-testid="pull-error"]');
    await error.waitFor();
    assert.match(await error.innerText(), /^The pull failed: .*not a model.*is not a model reference/);
    await page.fill('#pull-reference', 'hf:acme/Tiny-GGUF:Q2_K');
    await page.click('[data-testid="pull"]');
    await page.locator('[data-testid="pull-error"]', { hasText: /Q2_K/ }).waitFor();
    assert.match(await error.innerText(), /tiny-Q4_K_M\.gguf/, 'the files there are named');
  });

  await t.test('pull: the progress bar fills with bytes and percent, then the model is a row of the table', async () => {
    // Slow enough that the bar is seen (and photographed) part-way; the end does not wait on a clock.
    hub.faults.throttleBytesPerSecond = 50_000;
    await page.fill('#pull-reference', 'hf:acme/Tiny-GGUF:Q4_K_M');
    await page.click('[data-testid="pull"]');
    await page.locator('#pull-progress[value]').waitFor();
    await page.locator('[data-testid="pull-bytes"]', { hasText: / of 603 KB \(\d+%\)/ }).waitFor();
    assert.equal(await page.locator('#pull-progress').getAttribute('max'), String(q4.length));
    assert.equal(await page.locator('label[for="pull-progress"]').innerText(), PULLED, 'the bar is named by the model');
    assert.equal(await page.locator('[data-testid="pull-error"]').count(), 0, 'the earlier error is gone');
    assert.deepEqual(await axeViolations(page), [], 'axe while pulling');
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await fitsWidth(page), 'the form and its bar fit 390 px');
    // keepScreenshots shows a phone the top of the page; this one shows it the form and its bar.
    await page.evaluate("document.querySelector('.pull-form').scrollIntoView()");
    await page.screenshot({ path: join(ARTIFACTS, 'console-runtime-models-pull-390.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    await keepScreenshots(page, 'runtime-models');
    hub.faults.throttleBytesPerSecond = 0;
    await page.locator('[data-testid="pull-status"]', { hasText: `Pulled ${PULLED}.` }).waitFor({ timeout: 60_000 });
    const row = page.locator(`#models tr[data-model="${PULLED}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /F32/, 'its quantization');
    assert.match(await row.innerText(), /603 KB/, 'its size');
    assert.equal(await row.locator('[data-testid="model-source"]').innerText(), 'svc models folder');
    assert.equal(await page.inputValue('#pull-reference'), '', 'the field is cleared for the next one');
  });

  await t.test('cancel stops a pull; the page says the partial file is kept', async () => {
    hub.faults.throttleBytesPerSecond = 20_000;
    await page.fill('#pull-reference', 'hf:acme/Tiny-GGUF:Q8_0');
    await page.click('[data-testid="pull"]');
    await page.locator('[data-testid="pull-bytes"]', { hasText: /\(\d+%\)/ }).waitFor();
    await page.click('[data-testid="pull-cancel"]');
    await page.locator('[data-testid="pull-status"]', { hasText: 'Pull cancelled' }).waitFor();
    assert.equal(await page.locator('#pull-progress').count(), 0);
    hub.faults.throttleBytesPerSecond = 0;
    const models = (await (await fetch(`${daemon.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.ok(!models.data.some((m) => m.id === 'hf:acme/Tiny-GGUF/tiny-Q8_0'), 'the cancelled model is not listed');
  });

  await t.test('delete asks first (Keep focused), then removes the row and the file', async () => {
    const row = page.locator(`#models tr[data-model="${PULLED}"]`);
    await row.locator('[data-model-action="delete"]').click();
    const keep = row.getByRole('button', { name: 'Keep' });
    await keep.waitFor();
    // Keep takes the focus once the confirmation has rendered (an effect, a frame later).
    await waitForExpression(page, "document.activeElement?.textContent === 'Keep'", 5_000).catch(() => undefined);
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Keep', 'Keep has the focus');
    assert.match(await row.locator('.confirm-inline').innerText(), /Delete 603 KB from disk\?/);
    assert.deepEqual(await axeViolations(page), [], 'axe with the confirmation open');
    await keep.click();
    assert.equal(await row.locator('.confirm-inline').count(), 0, 'Keep keeps it');
    await row.locator('[data-model-action="delete"]').click();
    await row.locator('[data-model-action="confirm-delete"]').click();
    await row.waitFor({ state: 'detached' });
    const answer = await fetch(`${daemon.url}/v1/models/${encodeURIComponent(PULLED)}`);
    assert.equal(answer.status, 404);
    assert.deepEqual(await axeViolations(page), []);
  });

  // The two refused pulls of the first subtest, as Chromium logs any 4xx answer; nothing else.
  assert.deepEqual(errors.filter((e) => !cancelNoise(e)), [
    'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    'Failed to load resource: the server responded with a status of 404 (Not Found)',
  ]);
});
