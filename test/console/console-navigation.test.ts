/**
 * The console's navigation (issue 28), in headless Chromium against a real `svc serve`: at
 * 1280 px every page is one link away; on a 390-px phone the list folds behind one Menu button
 * (its state said to assistive tech), opens as a column, takes you to a page and folds again;
 * Escape folds it too. axe finds nothing at any level, open or folded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ARTIFACTS, axeViolations, fitsWidth, keepScreenshots, closeBrowser, launch, openPage } from '../helpers/console-browser.ts';
import { startServerProcess, tinyModelPath } from '../helpers/daemon-process.ts';

const PAGES = ['Runtime', 'Chat', 'Spaces', 'Route solver', 'Portfolio solver', 'Grover search', 'Clustering', 'Classification'];

test('console navigation: every page one link away on a desktop, behind one Menu button on a phone', { timeout: 120_000 }, async (t) => {
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-console-nav-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const daemon = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${tinyModelPath()}`]);
  t.after(() => daemon.stop());

  await t.test('at 1280 px: the links are shown, no Menu button', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/`);
    const nav = page.getByRole('navigation', { name: 'Console pages' });
    assert.deepEqual(await nav.getByRole('link').allInnerTexts(), PAGES);
    assert.equal(await page.locator('.menu-toggle').isVisible(), false);
    await nav.getByRole('link', { name: 'Spaces' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spaces' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Spaces' }).getAttribute('aria-current'), 'page');
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('at 390 px: folded behind Menu, opened as a column, folded again after a choice or Escape', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 }, { mobile: true });
    await page.goto(`${daemon.url}/`);
    await page.getByRole('heading', { level: 1, name: 'Runtime' }).waitFor();
    const menu = page.getByRole('button', { name: /Menu/ });
    const nav = page.locator('#console-pages');
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false, 'the page list is folded');
    assert.match(await menu.innerText(), /Runtime/, 'the button says where you are');
    assert.ok(await fitsWidth(page));
    assert.deepEqual(await axeViolations(page), []);
    await keepScreenshots(page, 'navigation-folded');

    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    assert.equal(await nav.isVisible(), true);
    // A column: each link below the one before it.
    const boxes = await Promise.all(PAGES.map(async (name) => nav.getByRole('link', { name, exact: true }).boundingBox()));
    for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i]!.y >= boxes[i - 1]!.y + boxes[i - 1]!.height - 1, `${PAGES[i]} is below ${PAGES[i - 1]}`);
    assert.ok(await fitsWidth(page));
    assert.deepEqual(await axeViolations(page), []);
    await page.screenshot({ path: join(ARTIFACTS, 'console-navigation-open-390.png') });

    await nav.getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Chat' }).waitFor();
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.isVisible(), false);
    assert.match(await menu.innerText(), /Chat/);

    await menu.click();
    assert.equal(await nav.isVisible(), true);
    await page.keyboard.press('Escape');
    assert.equal(await nav.isVisible(), false, 'Escape folds the list');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
