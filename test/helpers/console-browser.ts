/**
 * Headless Chromium for the console's tests (driven by playwright-core; which Chromium, see
 * test-chromium.ts): every
 * console error, script error and failed request a page produces, axe-core's serious findings,
 * whether a page fits its window, and a solve clicked on a solver page.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { testChromium } from './test-chromium.ts';

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

/** Clicks a solver page's Solve button; resolves with the API's answer once the page has drawn it. */
export async function solveOnPage<T>(page: Page, button: string, drawn: string): Promise<T> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/solve'), { timeout: 60_000 }), page.click(button)]);
  const answer = await response.json() as T;
  await page.locator(drawn).waitFor({ timeout: 60_000 });
  return answer;
}

export async function launch(): Promise<Browser> {
  const { executablePath, env } = await testChromium();
  // No background networking: on a machine with no route out, Chromium's own update, sync and
  // component checks would otherwise be refused at every start.
  return chromium.launch({
    executablePath, headless: true, env: { ...process.env, ...env },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
