/**
 * Driving Debian's headless Chromium in the console tests: launching it, watching a page for
 * errors, axe-core, and the 360 px check. Screenshots go to ARTIFACTS (test-artifacts/).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

/** Every console error, uncaught exception and failed request the page produces. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('requestfailed', (request) => errors.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
  return errors;
}

/**
 * axe-core is evaluated over the DevTools protocol rather than added as a script tag: the
 * console's CSP refuses inline scripts, and loosening it for the test would test another page.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page: the test's own TypeScript has no DOM types.
  const violations = await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)") as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/** True when nothing makes the page wider than the window (no sideways scrolling at 360 px). */
export async function fitsWidth(page: Page): Promise<boolean> {
  return await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth') === true;
}

/** A fresh context (empty cache) and page, its errors watched; `clipboardOrigin` lets the copy buttons write there. */
export async function openPage(browser: Browser, viewport: { width: number; height: number }, options: { clipboardOrigin?: string; mobile?: boolean } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, ...(options.mobile === true ? { isMobile: true, hasTouch: true } : {}) });
  if (options.clipboardOrigin !== undefined) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.clipboardOrigin });
  const page = await context.newPage();
  return { context, page, errors: watchErrors(page) };
}

export async function launch(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `this test needs Debian's chromium at ${CHROMIUM} (apt-get install chromium)`);
  // No background networking: this machine has no route out (see test/hosted/pages).
  return chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
