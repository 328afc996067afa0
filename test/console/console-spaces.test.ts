/**
 * The console's Spaces page as people review it (issue 28), end to end: a real `svc serve` and
 * headless Chromium. Deleting a document and a space (asked first, in the page; a refusal said
 * in words), chunks numbered from 1, the ingest outcome said once, "the" not highlighted, each
 * score explained, dates with their time zone, a long query seen whole. What the page shows is
 * checked against the API's own answers. Screenshots: test-artifacts/console-spaces-*.png.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { axeViolationsAtWindows, fitsWidth, keepScreenshots, closeBrowser, launch, openPage, waitForExpression } from '../helpers/console-browser.ts';
import { startDaemon } from '../helpers/daemon-process.ts';

/** Several paragraphs of a few hundred characters each: more than one chunk. */
const HANDBOOK = Array.from({ length: 6 }, (_, i) => `Section ${i + 1}. ${'The pressure relief valve is checked before each shift and the gauge is read twice. '.repeat(7)}`).join('\n\n');
const VAULT = 'Open the vault door slowly. The vault is heavy, and the hinges of the door need grease each spring.';
/** Longer than any input box is wide: the whole of it must stay in view while typed. */
const LONG_QUERY = `${'which hinges of the vault door need grease in spring and how often should the relief valve gauge be read '.repeat(3)}end`;

const UTC_MINUTE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/;

interface ApiResult {
  chunk_id: string;
  snippet: string;
  snippet_marks: [number, number][];
  score: number;
  bm25_rank: number | null;
  dense_rank: number | null;
}

async function api<T>(url: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    ...(init.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) }),
  });
  assert.ok(response.ok, `${init.method ?? 'GET'} ${path}: ${await response.clone().text()}`);
  return await response.json() as T;
}

/** The API's created_at as the page writes it: UTC to the minute. */
function utcMinute(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** Runs a search from the page by pressing Enter in the query box; resolves with the API's answer once drawn. */
async function searchByEnter(page: Page, space: string): Promise<{ mode: string; data: ApiResult[] }> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/api/spaces/${space}/search`)),
    page.press('#search-query', 'Enter'),
  ]);
  const answer = await response.json() as { mode: string; data: ApiResult[] };
  await page.locator('#search-status', { hasText: `${answer.data.length} result` }).waitFor();
  return answer;
}

async function checkAccessible(page: Page): Promise<void> {
  assert.deepEqual(await axeViolationsAtWindows(page), { 1280: [], 390: [] });
  await page.setViewportSize({ width: 390, height: 844 });
  if (!(await fitsWidth(page))) {
    const wide = await page.evaluate("[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5 && !e.closest('.table-scroll')).slice(0, 8).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))");
    assert.fail(`sideways scrolling at 390 px: ${JSON.stringify(wide)}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('in headless Chromium: the Spaces page deletes, numbers from 1, explains scores and keeps long queries whole', { timeout: 180_000 }, async (t) => {
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const daemon = await startDaemon({ withModel: false });
  t.after(() => daemon.stop());
  const { context, page, errors } = await openPage(browser, { width: 1280, height: 900 });
  t.after(() => context.close());

  await page.goto(`${daemon.url}/#/spaces`);
  await page.fill('#space-name', 'handbook');
  await page.click('#space-create');
  await page.locator('#space-selected', { hasText: 'handbook' }).waitFor();
  const handbook = await api<{ id: string; chunk_count: number; created_at: string }>(daemon.url, '/api/spaces/handbook/documents', { method: 'POST', body: { text: HANDBOOK, title: 'Valve handbook', format: 'text' } });
  assert.ok(handbook.chunk_count > 1, `${handbook.chunk_count} chunks`);

  // Uploaded with the picker: the outcome is said once (the live region), not again beside a bar.
  await page.setInputFiles('#spaces-file', { name: 'vault.txt', mimeType: 'text/plain', buffer: Buffer.from(VAULT) });
  await page.locator('#upload-status', { hasText: 'Done: vault.txt added.' }).waitFor({ timeout: 60_000 });
  const uploadText = await page.locator('section[aria-labelledby="upload-title"]').innerText();
  assert.equal(uploadText.match(/added/g)?.length, 1, uploadText);
  assert.equal(uploadText.match(/vault\.txt/g)?.length, 1, uploadText);
  await page.locator('#documents-table tbody tr[data-document]').nth(1).waitFor();

  // Dates carry their time zone (UTC, to the minute): the documents' Added and the spaces' Created.
  const documents = (await api<{ data: { id: string; source: string | null; created_at: string; chunk_count: number }[] }>(daemon.url, '/api/spaces/handbook/documents')).data;
  const vault = documents.find((d) => d.source === 'vault.txt')!;
  for (const d of documents) {
    const added = await page.locator(`#documents-table tr[data-document="${d.id}"] td`).nth(5).innerText();
    assert.match(added, UTC_MINUTE);
    assert.equal(added, utcMinute(d.created_at));
  }
  const space = (await api<{ data: { name: string; created_at: string }[] }>(daemon.url, '/api/spaces')).data.find((s) => s.name === 'handbook')!;
  assert.equal(await page.locator('#spaces-table tbody tr', { hasText: 'handbook' }).locator('td').last().innerText(), utcMinute(space.created_at));

  // Chunks are numbered from 1 as people count; the API's positions stay 0-based.
  const chunks = (await api<{ data: { id: string; position: number }[] }>(daemon.url, `/api/spaces/handbook/documents/${handbook.id}/chunks`)).data;
  assert.equal(chunks[0]!.position, 0);
  await page.locator(`#documents-table tr[data-document="${handbook.id}"] button[aria-controls]`).click();
  const items = page.locator(`#chunks-${handbook.id} li`);
  await items.nth(chunks.length - 1).waitFor();
  assert.deepEqual(await items.evaluateAll((lis) => lis.map((li) => (li as unknown as { value: number }).value)), chunks.map((_, i) => i + 1));

  // "the" is in the query and the API marks it; the page highlights only the words the query is about.
  await page.fill('#search-query', 'the vault door');
  const found = await searchByEnter(page, 'handbook');
  assert.equal(found.mode, 'hybrid');
  const top = found.data.find((r) => r.snippet.includes('vault'))!;
  const apiMarked = top.snippet_marks.map(([start, end]) => top.snippet.slice(start, end).toLowerCase());
  assert.ok(apiMarked.includes('the'), `the API marks "the" (${apiMarked.join()}): the page must leave it out`);
  const hit = page.locator(`#search-results li[data-chunk="${top.chunk_id}"]`);
  const shown = (await hit.locator('mark').allInnerTexts()).map((m) => m.toLowerCase());
  assert.deepEqual(shown, apiMarked.filter((word) => word !== 'the'));
  assert.ok(shown.includes('vault') && shown.includes('door'), shown.join());
  assert.ok(!(await hit.locator('.snippet').innerText()).includes('«'), 'the API\'s « » around "the" are left out too');

  // Each score is explained: what the number is (rounded to 3 places) and the ranks it comes from, and a legend.
  await page.locator('#score-legend', { hasText: 'reciprocal rank fusion' }).waitFor();
  const explained = await page.locator('#search-results .score').allInnerTexts();
  const ranks = (r: ApiResult) => (r.bm25_rank === null ? `meaning rank ${r.dense_rank} only; not in the word list` : r.dense_rank === null ? `word rank ${r.bm25_rank} only; not in the meaning list` : `word rank ${r.bm25_rank} and meaning rank ${r.dense_rank}`);
  assert.deepEqual(explained, found.data.map((r) => `relevance ${r.score.toFixed(3)} (RRF of ${ranks(r)})`));

  // A long query is seen whole: the box grows (no hidden lines, no sideways scroll), at 1280 and 390 px.
  // Shift+Enter adds a line; Enter searches with the whole text.
  await page.fill('#search-query', LONG_QUERY);
  await page.locator('#search-query').press('Shift+Enter');
  await page.locator('#search-query').pressSequentially('second line');
  assert.equal(await page.inputValue('#search-query'), `${LONG_QUERY}\nsecond line`);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    // The box grows again from a ResizeObserver, which reports after the next layout: give it that.
    await waitForExpression(page, "(() => { const e = document.querySelector('#search-query'); return e.scrollHeight <= e.clientHeight + 1; })()", 5_000).catch(() => undefined);
    const box = await page.locator('#search-query').evaluate((el) => { const e = el as unknown as { scrollHeight: number; clientHeight: number; scrollWidth: number; clientWidth: number }; return { scrollHeight: e.scrollHeight, clientHeight: e.clientHeight, scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }; });
    assert.ok(box.scrollHeight <= box.clientHeight + 1 && box.scrollWidth <= box.clientWidth + 1, `${width} px: ${JSON.stringify(box)}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const [longSearch] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/search')), page.press('#search-query', 'Enter')]);
  assert.equal((longSearch.postDataJSON() as { query: string }).query, `${LONG_QUERY}\nsecond line`);
  await page.locator('#search-status', { hasText: 'second line' }).waitFor();

  await page.fill('#search-query', 'the vault door');
  await searchByEnter(page, 'handbook');
  // Each result's rank is its number in the list, 1 to n, whatever the searches before it showed.
  assert.deepEqual(await page.locator('#search-results > li').evaluateAll((lis) => lis.map((li) => (li as unknown as { value: number }).value)), found.data.map((_, i) => i + 1));
  await page.locator('#search-results').scrollIntoViewIfNeeded();
  await keepScreenshots(page, 'spaces');
  await checkAccessible(page);

  // Delete a document: asked first (Cancel focused, and Cancel deletes nothing), then gone from the page and the API.
  await page.click(`#delete-${handbook.id}`);
  await page.locator(`#delete-${handbook.id}-question`, { hasText: 'Delete “Valve handbook”' }).waitFor();
  assert.match(await page.locator(`#delete-${handbook.id}-question`).innerText(), new RegExp(`its ${handbook.chunk_count} chunks\\? .*cannot be undone`));
  await waitForExpression(page, "document.activeElement.textContent === 'Cancel'");
  await checkAccessible(page);
  await page.keyboard.press('Enter');
  await waitForExpression(page, `document.activeElement.id === ${JSON.stringify(`delete-${handbook.id}`)}`); // focus back on the Delete button
  assert.equal((await api<{ data: unknown[] }>(daemon.url, '/api/spaces/handbook/documents')).data.length, 2);
  await page.click(`#delete-${handbook.id}`);
  const [deleted] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'DELETE'), page.click(`#delete-${handbook.id}-confirm`)]);
  assert.equal(deleted.url(), `${daemon.url}/api/spaces/handbook/documents/${handbook.id}`);
  await page.locator('#documents-status', { hasText: 'Deleted “Valve handbook”.' }).waitFor();
  await waitForExpression(page, "document.activeElement?.id === 'documents-title'", 5_000).catch(() => undefined);
  assert.equal(await page.evaluate('document.activeElement.id'), 'documents-title', 'focus on the list the row left, not lost');
  assert.equal(await page.locator(`#documents-table tr[data-document="${handbook.id}"]`).count(), 0);
  assert.deepEqual((await api<{ data: { id: string }[] }>(daemon.url, '/api/spaces/handbook/documents')).data.map((d) => d.id), [vault.id]);
  // The spaces table is read again after the delete: its document count follows.
  await waitForExpression(page, "/^handbook\\s+1\\s/.test(document.querySelector('#spaces-table tbody tr')?.innerText ?? '')");

  // A delete that fails is said in words beside the button, and the row stays (here the daemon is out of reach).
  await page.route('**/api/spaces/handbook/documents/*', (route) => (route.request().method() === 'DELETE' ? route.abort('connectionrefused') : route.continue()));
  await page.click(`#delete-${vault.id}`);
  await page.click(`#delete-${vault.id}-confirm`);
  assert.match(await page.locator(`#delete-${vault.id}-error`).innerText(), /^Could not delete: The daemon is not answering: it may have stopped/);
  assert.equal(await page.locator(`#documents-table tr[data-document="${vault.id}"]`).count(), 1);
  await page.unroute('**/api/spaces/handbook/documents/*');
  const logged = errors.splice(0);
  assert.ok(logged.every((e) => /ERR_CONNECTION_REFUSED|ERR_FAILED/.test(e)), logged.join('\n'));
  // Deleted meanwhile elsewhere (the CLI, another tab): asked again, the page catches up instead of failing.
  await api(daemon.url, `/api/spaces/handbook/documents/${vault.id}`, { method: 'DELETE' });
  await page.click(`#delete-${vault.id}-confirm`);
  await page.locator('#documents-status', { hasText: 'Deleted “vault.txt”.' }).waitFor();
  assert.equal(await page.locator(`#documents-table tr[data-document="${vault.id}"]`).count(), 0);
  await waitForExpression(page, "/^handbook\\s+0\\s/.test(document.querySelector('#spaces-table tbody tr')?.innerText ?? '')");
  errors.splice(0, errors.length, ...errors.filter((e) => !/status of 404/.test(e)));

  // Delete the space: asked first, naming what it holds; then gone from the list and the API, and said.
  await page.click('#space-delete');
  assert.match(await page.locator('#space-delete-question').innerText(), /^Delete the space “handbook” and its 0 documents \(0 chunks\)\? This cannot be undone\.$/);
  await page.click('#space-delete-confirm');
  await page.locator('#spaces-status', { hasText: 'Space “handbook” deleted.' }).waitFor();
  await waitForExpression(page, "document.activeElement?.id === 'spaces-title'", 5_000).catch(() => undefined);
  assert.equal(await page.evaluate('document.activeElement.id'), 'spaces-title');
  assert.equal(await page.locator('#space-selected').count(), 0);
  await page.locator('#spaces-panel', { hasText: 'No space yet' }).waitFor();
  assert.deepEqual((await api<{ data: unknown[] }>(daemon.url, '/api/spaces')).data, []);
  await checkAccessible(page);
  assert.deepEqual(errors, []);
});
