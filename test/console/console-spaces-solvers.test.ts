/**
 * The console's Spaces page, chat with retrieval, and the Grover, clustering and classification
 * solver pages, end to end: a real `svc serve` with the tiny GGUF fixture and headless Chromium.
 * What each page shows is checked against the API's own answer, read from the same request the
 * page made. Screenshots go to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, fitsWidth, closeBrowser, launch, openPage, axeViolations, solveOnPage } from '../helpers/console-browser.ts';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

const PUMP_MANUAL = [
  '# Pump manual',
  '',
  '## Service',
  '',
  'Replace the impeller seal every 900 hours of running time. Check the bearing temperature weekly.',
  '',
  '## Storage',
  '',
  'Keep the pump dry and away from frost during the winter months.',
].join('\n');

const GARDEN_NOTES = 'Tomatoes need staking in June. Water the beans in the evening, never at noon.';

/** A document with its own « »: they must stay text, never taken for the API's highlight marks. */
const QUOTED_NOTICE = 'Le manuel dit «ne jamais ouvrir» la vanne « sans vérifier le joint, puis le «joint» torique du filtre.';

/** A file name that would be markup if the page ever parsed text as HTML. */
const HOSTILE_NAME = '<img src=x onerror="document.title=\'pwned\'">.md';

/** One paragraph per chunk-sized piece: enough text for more than one page of chunks (100). */
const LONG_TEXT = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} on valve maintenance: ${'check the seals, the flanges and the gaskets before each season; '.repeat(6)}`).join('\n\n');

interface Citation {
  index: number;
  title: string | null;
  source: string | null;
  heading_path: string[];
  snippet: string;
  snippet_marks: [number, number][];
}

/** A snippet as the page should show it: the API's « » around each mark left out, every other character kept. */
function shownSnippet(snippet: string, marks: readonly [number, number][]): string {
  const dropped = new Set(marks.flatMap(([start, end]) => [start - 1, end]));
  return [...snippet].filter((_, i) => !dropped.has(i)).join('');
}

interface Outcome {
  bitstring: string;
  count: number;
  optimal: boolean;
}

/** Drops one file on the Spaces page's drop zone, as a drag from the desktop would. */
async function dropFile(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(`(() => {
    const data = new DataTransfer();
    data.items.add(new File([${JSON.stringify(text)}], ${JSON.stringify(name)}, { type: 'text/markdown' }));
    document.querySelector('#drop-zone').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  })()`);
}

/** Adds a document with the JSON API (what the page lists and searches, not how it uploads). */
async function postJsonDocument(url: string, space: string, body: Record<string, unknown>): Promise<{ id: string; chunk_count: number }> {
  const response = await fetch(`${url}/api/spaces/${space}/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(response.ok, await response.clone().text());
  return await response.json() as { id: string; chunk_count: number };
}

/** The `svc_retrieval` of a streamed chat reply, from its SSE body. */
function retrievalOf(sse: string): { status: string; citations: Citation[] } {
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6)) as { svc_retrieval?: { status: string; citations: Citation[] } };
    if (chunk.svc_retrieval !== undefined) return chunk.svc_retrieval;
  }
  throw new Error('no svc_retrieval in the stream');
}

test('in headless Chromium: spaces, chat with citations, Grover, clustering and classification pages', { timeout: 240_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const daemon: DaemonProcess = await startDaemon();
  t.after(() => daemon.stop());

  await t.test('spaces page: create a space, upload by drop and by the picker, search with highlighted snippets', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/spaces`);
    await page.fill('#space-name', 'manuals');
    await page.click('#space-create');
    await page.locator('#space-selected', { hasText: 'manuals' }).waitFor();

    // Dropped: the job is read until it ends, then the document is listed with the API's chunk count.
    await dropFile(page, 'pump.md', PUMP_MANUAL);
    // The outcome is said once, in the upload's live region.
    await page.locator('#upload-status', { hasText: 'Done: pump.md added.' }).waitFor({ timeout: 60_000 });
    const listed = await (await fetch(`${daemon.url}/api/spaces/manuals/documents`)).json() as { data: { id: string; source: string; chunk_count: number; title: string }[] };
    assert.equal(listed.data.length, 1);
    const pump = listed.data[0]!;
    const row = page.locator(`#documents-table tr[data-document="${pump.id}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`${pump.title}\\s+pump\\.md\\s+markdown\\s+${pump.chunk_count}\\b`));
    // Its chunks, listed under it in order, are the API's. The first request fails (the
    // connection drops): the error shows; closed and opened again, it is asked again and cleared.
    let chunkRequests = 0;
    let answerSecond = (): void => undefined;
    const secondHeld = new Promise<void>((resolve) => { answerSecond = resolve; });
    await page.route('**/chunks?*', async (route) => {
      chunkRequests++;
      if (chunkRequests === 1) return route.abort('connectionreset');
      // The second is held until the row has been closed and opened again while it is on its way.
      if (chunkRequests === 2) await secondHeld;
      return route.continue();
    });
    const chunksButton = row.locator('button[aria-controls]');
    await chunksButton.click();
    await page.locator(`#chunks-${pump.id} [role="alert"]`).waitFor();
    await chunksButton.click();
    await chunksButton.click();
    await page.locator(`#chunks-${pump.id} .muted`, { hasText: 'Loading' }).waitFor();
    await chunksButton.click();
    await chunksButton.click();
    answerSecond();
    const chunks = (await (await fetch(`${daemon.url}/api/spaces/manuals/documents/${pump.id}/chunks`)).json() as { data: { id: string; text: string }[] }).data;
    await page.locator(`#chunks-${pump.id} li`).first().waitFor();
    assert.equal(await page.locator(`#chunks-${pump.id} [role="alert"]`).count(), 0, 'the old error is gone');
    assert.deepEqual(await page.locator(`#chunks-${pump.id} li`).evaluateAll((items) => items.map((li) => li.getAttribute('data-chunk'))), chunks.map((c) => c.id));
    assert.equal(await page.locator(`#chunks-${pump.id} li .snippet`).first().innerText(), chunks[0]!.text);
    // Closed and opened quickly: what is loaded stays, nothing is asked again.
    await chunksButton.click();
    await chunksButton.click();
    await page.locator(`#chunks-${pump.id} li`).first().waitFor();
    assert.equal(chunkRequests, 2);
    await page.unroute('**/chunks?*');
    errors.splice(0, errors.length, ...errors.filter((e) => !/ERR_CONNECTION_RESET|Failed to fetch/.test(e)));

    // The keyboard's way in: the file picker.
    await page.setInputFiles('#spaces-file', { name: 'garden.txt', mimeType: 'text/plain', buffer: Buffer.from(GARDEN_NOTES) });
    await page.locator('#upload-status', { hasText: 'Done: garden.txt added.' }).waitFor({ timeout: 60_000 });
    await page.locator('#documents-table tbody tr').nth(1).waitFor();
    // The spaces table is refreshed by a request of its own after the documents': wait for it.
    let spacesText = '';
    for (let i = 0; i < 100; i++) {
      spacesText = await page.locator('#spaces-table').innerText();
      if (/manuals\s+2\s+\d+/.test(spacesText)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(spacesText, /manuals\s+2\s+\d+/);

    // Search: the hit is shown with the API's snippet, its matched words in <mark>, and its heading path.
    // The live region that announces the count is there before the first search.
    assert.equal(await page.locator('#search-status[aria-live="polite"]').count(), 1);
    await page.fill('#search-query', 'impeller seal');
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/spaces/manuals/search')), page.click('#search-run')]);
    const found = await response.json() as { mode: string; data: { chunk_id: string; snippet: string; snippet_marks: [number, number][]; heading_path: string[] }[] };
    assert.equal(found.mode, 'hybrid');
    const top = found.data[0]!;
    const hit = page.locator(`#search-results li[data-chunk="${top.chunk_id}"]`);
    await hit.waitFor();
    assert.deepEqual(top.heading_path, ['Pump manual', 'Service']);
    assert.match(await hit.locator('.place').innerText(), /Pump manual › Service/);
    const marked = await hit.locator('mark').allInnerTexts();
    assert.deepEqual(marked, top.snippet_marks.map(([start, end]) => top.snippet.slice(start, end)));
    assert.ok(marked.map((m) => m.toLowerCase()).includes('impeller'), marked.join());
    assert.equal(await hit.locator('.snippet').innerText(), shownSnippet(top.snippet, top.snippet_marks));
    assert.match(await page.locator('#search-status').innerText(), new RegExp(`^${found.data.length} results? for`));

    // A document's own « » stay text: only the matched words are marked, the quotes are shown as typed.
    await postJsonDocument(daemon.url, 'manuals', { text: QUOTED_NOTICE, title: 'Notice', format: 'text' });
    await page.fill('#search-query', 'joint');
    const [quotedResponse] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/spaces/manuals/search')), page.click('#search-run')]);
    const quoted = (await quotedResponse.json() as typeof found).data.find((r) => r.snippet.includes('ne jamais'))!;
    const quotedHit = page.locator(`#search-results li[data-chunk="${quoted.chunk_id}"]`);
    await quotedHit.waitFor();
    assert.deepEqual(await quotedHit.locator('mark').allInnerTexts(), ['joint', 'joint']);
    const shownText = await quotedHit.locator('.snippet').innerText();
    assert.ok(shownText.includes('dit «ne jamais ouvrir» la vanne « sans'), shownText);
    assert.ok(shownText.includes('le «joint» torique'), shownText);
    assert.equal(shownText, shownSnippet(quoted.snippet, quoted.snippet_marks));

    // The mode toggle is sent as the API's `mode`.
    await page.check('input[name="search-mode"][value="bm25"]');
    const [bm25] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/search')), page.click('#search-run')]);
    assert.equal((bm25.request().postDataJSON() as { mode: string }).mode, 'bm25');
    assert.equal((await bm25.json() as { mode: string }).mode, 'bm25');
    await page.locator('#search-results li').first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'console-spaces.png'), fullPage: true });

    // A file whose name is markup: shown as text everywhere, nothing of it parsed (no <img>, no handler ran).
    assert.equal(await page.locator('#upload-status[aria-live="polite"]').count(), 1, 'the upload live region is there before any upload');
    await dropFile(page, HOSTILE_NAME, 'A note about the relief valve.');
    await page.locator('#upload-status', { hasText: /^Done: .*onerror/ }).waitFor({ timeout: 60_000 });
    assert.match(await page.locator('#upload-status').innerText(), /^Done: .*onerror.* added\.$/);
    await page.locator('#documents-table td', { hasText: 'onerror' }).first().waitFor();
    assert.equal(await page.locator('img').count(), 0);
    assert.notEqual(await page.title(), 'pwned');
    const docs = (await (await fetch(`${daemon.url}/api/spaces/manuals/documents`)).json() as { data: { id: string; source: string | null }[] }).data;
    const hostile = docs.find((d) => d.source?.includes('onerror') === true)!;
    assert.match(hostile.source!, /<img src=x onerror=/, 'the name keeps its markup characters');
    assert.equal(await page.locator(`#documents-table tr[data-document="${hostile.id}"] td`).first().innerText(), hostile.source);
    assert.ok((await page.locator('#upload-status').innerText()).includes(hostile.source!));

    // A refused upload shows the envelope's message (Chromium logs the 415 itself: only that).
    const before = errors.length;
    await page.setInputFiles('#spaces-file', { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]) });
    await page.locator('#upload-error').waitFor();
    const logged = errors.splice(before);
    assert.ok(logged.every((e) => /status of 415/.test(e)), logged.join('\n'));
    assert.deepEqual(await axeViolations(page), []);

    // A document of more than one page of chunks: the first 100, then "More chunks" asks for the rest.
    await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bulk' }) });
    const long = await postJsonDocument(daemon.url, 'bulk', { text: LONG_TEXT, title: 'Valve log', format: 'text' });
    assert.ok(long.chunk_count > 100 && long.chunk_count <= 300, `${long.chunk_count} chunks`);
    await page.reload();
    // A background /health probe (connection-state.ts) in flight at the reload is cut off by it: not the page's failure.
    errors.splice(0, errors.length, ...errors.filter((e) => !/\/health net::ERR_ABORTED/.test(e)));
    await page.locator('#spaces-table button', { hasText: 'bulk' }).click();
    await page.locator(`#documents-table tr[data-document="${long.id}"] button[aria-controls]`).click();
    const items = page.locator(`#chunks-${long.id} li`);
    await items.nth(99).waitFor();
    assert.equal(await items.count(), 100);
    for (let shown = 100; shown < long.chunk_count; shown = Math.min(long.chunk_count, shown + 100)) {
      await page.locator(`#chunks-${long.id} .chunks-more:not([disabled])`).click();
      await items.nth(Math.min(long.chunk_count, shown + 100) - 1).waitFor();
    }
    assert.equal(await items.count(), long.chunk_count);
    // Numbered from 1 as people count (the API's positions are 0-based).
    assert.deepEqual(await items.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('value')))), [...Array(long.chunk_count).keys()].map((i) => i + 1));
    assert.equal(await page.locator(`#chunks-${long.id} .chunks-more`).count(), 0, 'no More once next is null');
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('chat page: with a space chosen, the citations the API returned are shown under the answer', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/chat`);
    await page.locator('#chat-model option', { hasText: 'tiny' }).waitFor({ state: 'attached' });
    await page.check('#chat-spaces input[value="manuals"]');
    await page.fill('#chat-max-tokens', '8');
    await page.fill('#chat-prompt', 'How often is the impeller seal replaced?');
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions')), page.click('#chat-send')]);
    assert.deepEqual((response.request().postDataJSON() as { spaces: string[] }).spaces, ['manuals']);
    await page.locator('#chat-send:not([disabled])').waitFor({ timeout: 60_000 });
    const retrieval = retrievalOf(await response.text());
    assert.equal(retrieval.status, 'ok');
    const shown = page.locator('#citations li');
    assert.equal(await shown.count(), retrieval.citations.length);
    const first = retrieval.citations[0]!;
    assert.equal(first.source, 'pump.md');
    const item = shown.first();
    assert.equal(await item.getAttribute('value'), String(first.index));
    assert.match(await item.innerText(), new RegExp(`${first.title}[\\s\\S]*pump\\.md[\\s\\S]*${first.heading_path.join(' › ')}`));
    assert.equal(await item.locator('.snippet').innerText(), shownSnippet(first.snippet, first.snippet_marks));
    assert.ok(await item.locator('mark').count() > 0);
    await page.click('#copy-curl');
    assert.match(await page.locator('#snippet').innerText(), /"spaces":\["manuals"\]/);
    await page.click('#copy-openai-python');
    assert.match(await page.locator('#snippet').innerText(), /extra_body=extra_body/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-chat-citations.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('Grover page: the histogram is the API\'s counts, the matching record marked optimal', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/solve/grover`);
    const answer = await solveOnPage<{ solution: { target_index: number; measurement_counts: { shots: number; optimal_count: number; outcomes: Outcome[] } } }>(page, '#grover-solve', '#grover-histogram canvas');
    const counts = answer.solution.measurement_counts;
    assert.equal(answer.solution.target_index, 29);
    assert.match(await page.locator('#grover-answer').innerText(), /Record 29: order-29 .*FRAUD/);
    assert.match(await page.locator('#grover-histogram-optimal').innerText(), new RegExp(`^${counts.optimal_count.toLocaleString('en-US')} of ${counts.shots.toLocaleString('en-US')} shots optimal`));
    const rows = await page.locator('#grover-outcomes tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('code')!.textContent, tr.children[1]!.textContent, tr.getAttribute('data-optimal')]));
    assert.deepEqual(rows, counts.outcomes.map((o) => [o.bitstring, String(o.count), String(o.optimal)]));
    assert.equal(rows[0]![0], (29).toString(2).padStart(6, '0'));
    assert.equal(rows[0]![2], 'true');
    await page.screenshot({ path: join(ARTIFACTS, 'console-grover-solver.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);

    // QAOA histograms on the portfolio and route pages.
    await page.goto(`${daemon.url}/#/solve/portfolio`);
    const portfolio = await solveOnPage<{ solution: { measurement_counts: { outcomes: Outcome[] } } }>(page, '#portfolio-solve', '#portfolio-histogram canvas');
    assert.equal(await page.locator('#portfolio-outcomes tbody tr[data-optimal="true"]').count(), portfolio.solution.measurement_counts.outcomes.filter((o) => o.optimal).length);
    await page.goto(`${daemon.url}/#/solve/routes`);
    const route = await solveOnPage<{ solution: { quantum_result: { measurement_counts: { outcomes: Outcome[] } } } }>(page, '#route-solve', '#route-histogram-1 canvas');
    assert.equal(await page.locator('#route-outcomes-1 tbody tr').count(), route.solution.quantum_result.measurement_counts.outcomes.length);
    // Three vehicles: a histogram per route that ran a circuit (routes[i].quantum_result), the API's reason for the one that did not.
    const berlin = [[52.52, 13.405], [52.53, 13.42], [52.5, 13.45], [52.48, 13.39], [52.51, 13.36], [52.55, 13.3], [52.45, 13.5]];
    const threeVehicles = {
      type: 'route_optimization',
      nodes: berlin.map(([lat, lng], i) => ({ id: i === 0 ? 'depot' : `s${i}`, lat, lng })),
      constraints: { max_distance_km: 100, vehicle_count: 3 },
      options: { include_counts: true, counts_top_k: 8 },
    };
    await page.click('#route-raw summary');
    await page.fill('#route-problem', JSON.stringify(threeVehicles));
    type RouteCounts = { measurement_counts: { outcomes: Outcome[] } | null; measurement_counts_unavailable?: string };
    const split = await solveOnPage<{ solution: { routes: ({ vehicle: number; quantum_result?: RouteCounts } & Partial<RouteCounts>)[] } }>(page, '#route-solve', '#route-histogram-1 canvas, #route-counts-unavailable-1');
    let histograms = 0;
    for (const r of split.solution.routes) {
      const counts = r.quantum_result?.measurement_counts;
      if (counts != null) {
        histograms++;
        await page.locator(`#route-histogram-${r.vehicle} canvas`).waitFor();
        assert.equal(await page.locator(`#route-outcomes-${r.vehicle} tbody tr`).count(), counts.outcomes.length);
      } else {
        assert.equal(r.measurement_counts, null);
        assert.equal(await page.locator(`#route-counts-unavailable-${r.vehicle}`).innerText(), `No histogram: ${r.measurement_counts_unavailable!}.`);
      }
    }
    assert.equal(histograms, 2, 'two of the three routes ran a QAOA circuit');
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('clustering page: every point in the cluster the API put it in', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/solve/clustering`);
    const answer = await solveOnPage<{ solution: { clusters: { id: number; members: string[] }[]; classical_inertia: number } }>(page, '#clustering-solve', '#clustering-chart canvas');
    assert.equal(answer.solution.clusters.length, 3);
    for (const c of answer.solution.clusters) {
      assert.equal(await page.locator(`#clustering-clusters li[data-cluster="${c.id}"]`).innerText(), `Cluster ${c.id}: ${c.members.join(', ')}`);
    }
    assert.equal(await page.locator('#clustering-optimum').innerText(), answer.solution.classical_inertia.toLocaleString('en-US', { maximumFractionDigits: 3 }));
    await page.screenshot({ path: join(ARTIFACTS, 'console-clustering-solver.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('classification page: the regions are the solver\'s predictions for the grid the page sent', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1100, height: 900 });
    await page.goto(`${daemon.url}/#/solve/classification`);
    await page.locator('#classification-solve').waitFor();
    const sent = page.waitForRequest((r) => r.url().endsWith('/api/solve'));
    const answer = await solveOnPage<{ solution: { predictions: { label: string }[]; labels: string[]; support_vectors: { label: string; count: number }[] } }>(page, '#classification-solve', '#classification-chart canvas');
    const body = (await sent).postDataJSON() as { problem: { predict: { features: number[] }[] } };
    assert.equal(body.problem.predict.length, 3 + 24 * 24, 'the user\'s 3 points, then the 24 × 24 grid');
    const predictions = answer.solution.predictions;
    assert.equal(predictions.length, body.problem.predict.length);
    const legend = await page.locator('#classification-result figcaption').innerText();
    for (const label of ['low', 'high']) {
      const onGrid = predictions.slice(3).filter((p) => p.label === label).length;
      assert.ok(legend.includes(`predicted ${label} (${onGrid} grid points)`), `${label}: ${onGrid} in ${legend}`);
      assert.ok(onGrid > 0, `some of the grid is ${label}`);
    }
    // The figures that count the grid's circuits say so.
    const circuits = page.locator('.fact', { has: page.locator('#classification-circuits') });
    assert.match(await circuits.locator('dt').innerText(), /including the 576 grid points/);
    // support vectors per one-vs-rest model, read as the API gave them
    assert.equal(await page.locator('#classification-support-vectors').innerText(), answer.solution.support_vectors.map((s) => `${s.label}: ${s.count}`).join(', '));
    const labels = await page.locator('#classification-predictions tbody td:nth-child(3)').allInnerTexts();
    assert.deepEqual(labels, predictions.slice(0, 3).map((p) => p.label));
    await page.screenshot({ path: join(ARTIFACTS, 'console-classification-solver.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('the new pages fit a 360 px wide screen and pass axe there', async () => {
    const { context, page, errors } = await openPage(browser, { width: 360, height: 740 }, { mobile: true });
    const pages = [
      { hash: '#/chat', ready: '#chat-spaces input[value="manuals"]', name: 'chat-spaces', solve: null },
      { hash: '#/spaces', ready: '#space-name', name: 'spaces', solve: null },
      { hash: '#/solve/grover', ready: '#grover-solve', name: 'grover-solver', solve: ['#grover-solve', '#grover-histogram canvas'] },
      { hash: '#/solve/clustering', ready: '#clustering-solve', name: 'clustering-solver', solve: ['#clustering-solve', '#clustering-chart canvas'] },
      { hash: '#/solve/classification', ready: '#classification-solve', name: 'classification-solver', solve: ['#classification-solve', '#classification-chart canvas'] },
    ] as const;
    for (const { hash, ready, name, solve } of pages) {
      await page.goto(`${daemon.url}/${hash}`);
      await page.locator(ready).waitFor();
      if (solve !== null) {
        await page.click(solve[0]);
        await page.locator(solve[1]).waitFor({ timeout: 60_000 });
      } else if (name === 'spaces') {
        await page.click('#spaces-table button:text-is("manuals")');
        await page.fill('#search-query', 'frost');
        await page.click('#search-run');
        await page.locator('#search-results li').first().waitFor();
      }
      assert.ok(await fitsWidth(page), `${name} scrolls sideways at 360 px`);
      assert.deepEqual(await axeViolations(page), [], name);
      await page.screenshot({ path: join(ARTIFACTS, `console-${name}-360.png`), fullPage: true });
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
});
