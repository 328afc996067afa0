/**
 * The console's first load (issue 14's budget: ≤ 150 KB of compressed JavaScript, every page
 * interactive in ≤ 1 s with the daemon idle), measured in Debian's headless Chromium against a
 * real `svc serve` with the tiny fixture model, and the hosted usage page on a real `svc hosted`
 * (signed in, two metered chats in its ledger).
 *
 * For each page, `--rounds` cold loads (a new browser context: empty cache) and as many warm
 * loads (a reload in that context: index revalidated, hashed assets from the cache), reporting
 * medians of Chromium's navigation timings — DOMContentLoaded and load — and of "interactive":
 * the moment the page shows what it fetched from the API (the model table, the model picker,
 * a solve form), read in the page as performance.now() from navigation start. Bytes: what
 * the cold load transferred (Resource Timing transferSize; the daemon sends files uncompressed,
 * it is a loopback server) and the gzipped size of the JavaScript it ran (the budget's measure).
 *
 * Usage: npm run bench:console [-- --rounds 7 --json]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST } from '../src/console/console-routes.ts';
import { openHostedStore } from '../src/accounts/store/open-hosted-store.ts';
import { launch } from '../test/helpers/console-browser.ts';
import { startDaemon, startServerProcess, tinyModelPath } from '../test/helpers/daemon-process.ts';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, json: { type: 'boolean', default: false } } });
const ROUNDS = Number(flags.rounds);

/** `path` on the local daemon, or on the signed-in `svc hosted` for the usage page. */
const PAGES = [
  { name: 'runtime', path: '/#/', ready: '#models tbody tr', hosted: false },
  { name: 'chat', path: '/#/chat', ready: '#chat-model option', hosted: false },
  { name: 'route solver', path: '/#/solve/routes', ready: '#route-solve', hosted: false },
  { name: 'portfolio solver', path: '/#/solve/portfolio', ready: '#portfolio-solve', hosted: false },
  { name: 'spaces', path: '/#/spaces', ready: '#spaces-panel[aria-busy="false"]', hosted: false },
  { name: 'grover search', path: '/#/solve/grover', ready: '#grover-solve', hosted: false },
  { name: 'clustering', path: '/#/solve/clustering', ready: '#clustering-solve', hosted: false },
  { name: 'classification', path: '/#/solve/classification', ready: '#classification-solve', hosted: false },
  { name: 'hosted usage', path: '/api/console/usage', ready: '#joules-chart canvas', hosted: true },
] as const;

interface Load {
  domContentLoaded: number;
  load: number;
  interactive: number;
  transferBytes: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The gzipped size of the scripts a page of the build loads, its entry and the chunks it preloads (what the budget counts). */
function compressedFirstLoadJs(html: string): { raw: number; gzip: number } {
  const page = readFileSync(join(CONSOLE_DIST, html), 'utf8');
  let raw = 0;
  let gzip = 0;
  for (const [, path] of [...page.matchAll(/<script[^>]+src="\.\/([^"]+)"/g), ...page.matchAll(/<link rel="modulepreload"[^>]+href="\.\/([^"]+)"/g)]) {
    const bytes = readFileSync(join(CONSOLE_DIST, path!));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

/**
 * `svc hosted` with the tiny model, an entitled account with two metered chats in its ledger, and
 * the session cookie a sign-in link gives: the hosted usage page is measured signed in.
 */
async function startHostedSignedIn(): Promise<{ url: string; cookie: { name: string; value: string; url: string }; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-console-'));
  const store = await openHostedStore({ dataDir });
  const account = await store.createAccount({ name: 'bench', plan: { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false } });
  const { secret } = await store.issueKey(account.id, { scope: 'supercomputer' });
  const hosted = await startServerProcess(['hosted', '--port', '0', '--data-dir', dataDir, '--model', tinyModelPath()]);
  for (const project of ['web', 'etl']) {
    const answer = await fetch(`${hosted.url}/api/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-svc-project-id': project },
      body: JSON.stringify({ model: 'svc-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 }),
    });
    if (answer.status !== 200) throw new Error(`hosted chat answered ${answer.status}`);
  }
  const { token } = await store.createSignInToken(account.id, 60_000);
  const session = await (await fetch(`${hosted.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })).json() as { session_token: string };
  return {
    url: hosted.url,
    cookie: { name: 'svc_session', value: session.session_token, url: hosted.url },
    async stop() {
      await hosted.stop();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// Strings evaluated in the page: this file's TypeScript has no DOM types.
const NAVIGATION_TIMING = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  return {
    domContentLoaded: nav.domContentLoadedEventEnd,
    load: nav.loadEventEnd,
    transferBytes: nav.transferSize + resources.reduce((s, r) => s + r.transferSize, 0),
  };
})()`;

const daemon = await startDaemon();
const hosted = await startHostedSignedIn();
// The tests' Chromium (the npm package's, or Debian's or SVC_TEST_CHROMIUM where present): no system browser needed.
const browser = await launch();
const results: { page: string; cold: Load; warm: Load }[] = [];
try {
  for (const target of PAGES) {
    const cold: Load[] = [];
    const warm: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
      if (target.hosted) await context.addCookies([hosted.cookie]);
      const page = await context.newPage();
      for (const sample of [cold, warm]) {
        if (sample === cold) await page.goto(`${target.hosted ? hosted.url : daemon.url}${target.path}`);
        else await page.reload();
        // A function, not a string: the console's CSP forbids eval, which a string predicate needs.
        const shown = await page.waitForFunction(
          (selector) => (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(selector) !== null && performance.now(),
          target.ready,
          { polling: 'raf' },
        );
        const interactive = await shown.jsonValue() as number;
        await page.waitForLoadState('load');
        const timing = await page.evaluate(NAVIGATION_TIMING) as Omit<Load, 'interactive'>;
        sample.push({ ...timing, interactive });
      }
      await context.close();
    }
    const summary = (loads: Load[]): Load => ({
      domContentLoaded: median(loads.map((l) => l.domContentLoaded)),
      load: median(loads.map((l) => l.load)),
      interactive: median(loads.map((l) => l.interactive)),
      transferBytes: median(loads.map((l) => l.transferBytes)),
    });
    results.push({ page: target.name, cold: summary(cold), warm: summary(warm) });
  }
} finally {
  await browser.close();
  await daemon.stop();
  await hosted.stop();
}

const js = compressedFirstLoadJs('index.html');
const usageJs = compressedFirstLoadJs('usage.html');
if (flags.json) {
  console.log(JSON.stringify({ rounds: ROUNDS, javascript: js, usage_page_javascript: usageJs, pages: results }, null, 2));
} else {
  console.log(`Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${ROUNDS} rounds, medians.`);
  console.log(`First-load JavaScript: console ${(js.raw / 1024).toFixed(1)} KB, ${(js.gzip / 1024).toFixed(1)} KB gzipped; usage page ${(usageJs.raw / 1024).toFixed(1)} KB, ${(usageJs.gzip / 1024).toFixed(1)} KB gzipped (budget 150 KB).`);
  console.log('');
  console.log('| page | cold: DOMContentLoaded | cold: interactive | cold: load | cold: bytes transferred | warm: interactive | warm: bytes transferred |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.page} | ${r.cold.domContentLoaded.toFixed(0)} ms | ${r.cold.interactive.toFixed(0)} ms | ${r.cold.load.toFixed(0)} ms | ${(r.cold.transferBytes / 1024).toFixed(1)} KB | ${r.warm.interactive.toFixed(0)} ms | ${(r.warm.transferBytes / 1024).toFixed(1)} KB |`);
  }
}
