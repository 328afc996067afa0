/**
 * Headless Chromium for the console's tests (driven by playwright-core; which Chromium, see
 * test-chromium.ts): every
 * console error, script error and failed request a page produces, axe-core's findings of any level,
 * whether a page fits its window, and a solve clicked on a solver page.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
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
 * Every axe-core finding, of any impact (minor and moderate too: the console promises none).
 * axe-core is evaluated over the DevTools protocol rather than added as a script tag: the
 * console's CSP refuses inline scripts, and loosening it for the test would test another page.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page: the test's own TypeScript has no DOM types.
  const violations = await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)") as AxeViolation[];
  return violations.map((v) => `${v.id} (${v.impact ?? 'no impact'}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/** The two windows every console page is checked and pictured at: a laptop's and a phone's. */
export const WINDOWS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }] as const;

/**
 * axe's findings at each of WINDOWS, keyed by width (`{ 1280: [], 390: [] }` when clean). The
 * page is resized in place, so its state is kept; the viewport it had is restored after.
 */
export async function axeViolationsAtWindows(page: Page): Promise<Record<number, string[]>> {
  const before = page.viewportSize();
  const found: Record<number, string[]> = {};
  for (const size of WINDOWS) {
    await page.setViewportSize(size);
    found[size.width] = await axeViolations(page);
  }
  if (before !== null) await page.setViewportSize(before);
  return found;
}

/**
 * The page as people see it at WINDOWS (1280 × 800 and a 390-px phone), kept in test-artifacts/ as
 * `console-<name>-1280.png` and `console-<name>-390.png` (the window, not the whole page): the
 * pictures docs/console.md shows. The page is resized in place, so its state is kept; the
 * viewport it had is restored after.
 */
export async function keepScreenshots(page: Page, name: string): Promise<void> {
  const before = page.viewportSize();
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const size of WINDOWS) {
    await page.setViewportSize(size);
    // What the page does on a resize (a ResizeObserver, Preact's effects after the next frame, a
    // chart drawn again at the new width) is done before the picture: three frames, then a task.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0)))))');
    await page.screenshot({ path: join(ARTIFACTS, `console-${name}-${size.width}.png`) });
  }
  if (before !== null) await page.setViewportSize(before);
}

/** True when nothing makes the page wider than the window (no sideways scrolling at 360 px). */
/**
 * Waits until `expression` is truthy in the page. Not `page.waitForFunction(string)`: that polls
 * by `eval` inside the page, which the console's CSP (`script-src 'self'`) refuses as soon as a
 * second poll is needed; `page.evaluate` of a string goes through DevTools, which CSP does not bind.
 */
export async function waitForExpression(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

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

/**
 * Closes the browser; if Chromium has not exited after `ms`, kills it, and close() then returns.
 * A full run once waited 15 minutes in browser.close() after its test had passed (the test
 * runner's timeout does not cover `t.after`), holding up the whole suite.
 */
export async function closeBrowser(browser: Browser, ms = 30_000): Promise<void> {
  const closed = browser.close();
  let timer: NodeJS.Timeout | undefined;
  const hung = await Promise.race([closed.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)))]);
  clearTimeout(timer);
  if (!hung) return;
  for (const pid of chromiumChildren()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  await closed;
}

/** This process's child processes that are Chromium (playwright starts it as a direct child); none where /proc does not say. */
function chromiumChildren(): number[] {
  try {
    const children = readdirSync('/proc/self/task').flatMap((task) => readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter((pid) => pid !== ''));
    return [...new Set(children)].map(Number).filter((pid) => {
      try {
        return /chrom|headless/i.test(readFileSync(`/proc/${pid}/comm`, 'utf8'));
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}
