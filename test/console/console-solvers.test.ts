/**
 * The five solver pages as people use them (issue 28): each problem's form edits the request the
 * page sends, the raw JSON view follows the form and the form the JSON, invalid JSON is said in
 * plain words, figures are rounded for reading, one "optimal" count with a tooltip saying what it
 * counts, the histogram's optimal bar shown or its absence explained, route-map labels clear of
 * each other, the markers and the arrowheads, histogram ticks that do not run together on a
 * 390 px phone, and no axe finding of any level at 1280 and 390 px. A real `svc serve` and
 * headless Chromium; screenshots in test-artifacts/console-<solver>-solver-{1280,390}.png.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { axeViolations, axeViolationsAtWindows, fitsWidth, keepScreenshots, closeBrowser, launch, openPage, solveOnPage, waitForExpression } from '../helpers/console-browser.ts';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

interface Counts {
  shots: number;
  optimal_count: number;
  outcomes: { optimal: boolean }[];
}

/** Solves on the page; the body the page sent and the API's answer. */
async function solve<T>(page: Page, prefix: string, drawn: string): Promise<{ body: { problem: Record<string, unknown> }; answer: T }> {
  const sent = page.waitForRequest((r: Request) => r.url().endsWith('/api/solve'));
  const answer = await solveOnPage<T>(page, `#${prefix}-solve`, drawn);
  return { body: (await sent).postDataJSON() as { problem: Record<string, unknown> }, answer };
}

/** The raw JSON view, opened, read as an object. */
async function rawProblem(page: Page, prefix: string): Promise<Record<string, unknown>> {
  if (await page.locator(`#${prefix}-raw[open]`).count() === 0) await page.click(`#${prefix}-raw summary`);
  return JSON.parse(await page.inputValue(`#${prefix}-problem`)) as Record<string, unknown>;
}

/** axe at 1280 and at 390 px, then the two screenshots. */
async function axeBothAndKeep(page: Page, name: string): Promise<void> {
  assert.deepEqual(await axeViolationsAtWindows(page), { 1280: [], 390: [] }, name);
  await keepScreenshots(page, name);
}

/** The one optimal count of a histogram: its text, and its tooltip's, shown on hover. */
async function checkOptimalCount(page: Page, histogram: string, counts: Counts, answerShots: number): Promise<void> {
  const anchor = page.locator(`#${histogram}-optimal`);
  assert.match(await anchor.innerText(), new RegExp(`^${counts.optimal_count.toLocaleString('en-US')} of ${counts.shots.toLocaleString('en-US')} shots optimal \\(`));
  const tip = page.locator(`#${await anchor.getAttribute('aria-describedby')}`);
  const words = await tip.textContent();
  assert.match(words!, /^Shots, of this circuit's .* that measured an optimal outcome: /);
  assert.ok(words!.includes(`meta.optimal_count in the raw response (${answerShots.toLocaleString('en-US')}) is narrower`), words!);
  assert.equal(await tip.isVisible(), false);
  await anchor.hover();
  assert.equal(await tip.isVisible(), true, 'the tooltip shows on hover');
  await page.mouse.move(0, 0);
  // meta's own optimal_count is not shown beside it: one "optimal" figure per histogram.
  const result = await page.locator('[id$="-result"]').innerText();
  assert.equal(result.match(/shots optimal/g)?.length, await page.locator('[id$="-optimal"].tip-anchor').count());
  assert.doesNotMatch(await page.locator('[id$="-meta"]').innerText(), /optimal/i);
  // The optimal outcome's bar is drawn, or the page says why not.
  if (counts.outcomes.some((o) => o.optimal)) assert.equal(await page.locator(`#${histogram}-no-optimal`).count(), 0);
  else assert.match(await page.locator(`#${histogram}-no-optimal`).innerText(), /^No (bar|optimal outcome)/);
}

test('in headless Chromium: the five solver pages\' forms, figures, optimal count, map labels and phone axes', { timeout: 300_000 }, async (t) => {
  const browser = await launch();
  t.after(() => closeBrowser(browser));
  const daemon: DaemonProcess = await startDaemon({ withModel: false });
  t.after(() => daemon.stop());

  await t.test('route: the stops form and the raw JSON in step, the request as edited, rounded figures, labels clear of arrowheads', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/routes`);
    await page.fill('#route-stop-1-lat', '52.531');
    await page.fill('#route-max-distance', '90');
    let raw = await rawProblem(page, 'route');
    assert.equal((raw['nodes'] as { lat: number }[])[1]!.lat, 52.531, 'the form edit is in the raw JSON');
    assert.equal((raw['constraints'] as { max_distance_km: number }).max_distance_km, 90);
    // The raw JSON edited: the form follows.
    raw = { ...raw, constraints: { ...(raw['constraints'] as object), max_distance_km: 80 } };
    await page.fill('#route-problem', JSON.stringify(raw, null, 2));
    assert.equal(await page.inputValue('#route-max-distance'), '80');
    // Invalid JSON: said inline, in words; the form keeps the last good problem.
    await page.fill('#route-problem', '{ "type": "route_optimization", }');
    assert.match(await page.locator('#route-json-status').innerText(), /^The raw JSON is not valid on line 1, column \d+: /);
    assert.equal(await page.inputValue('#route-max-distance'), '80');
    await page.fill('#route-problem', JSON.stringify(raw, null, 2));
    assert.equal(await page.locator('#route-json-status').innerText(), 'Valid JSON.');

    const { body, answer } = await solve<{ solution: { cost: number; quantum_result: { measurement_counts: Counts } }; meta: { energy: number; optimal_count: number } }>(page, 'route', '#route-histogram-1 canvas');
    assert.equal((body.problem['constraints'] as { max_distance_km: number }).max_distance_km, 80);
    assert.equal((body.problem['nodes'] as { lat: number }[])[1]!.lat, 52.531);
    // Rounded for reading; exact in the raw response.
    assert.equal(await page.locator('#route-cost').innerText(), `${answer.solution.cost.toLocaleString('en-US', { maximumFractionDigits: 2 })} km`);
    assert.match(await page.locator('#route-meta-energy').innerText(), /^-?[\d,]+(\.\d{1,2})?$/);
    assert.ok((await page.locator('#route-response-json').textContent())!.includes(String(answer.meta.energy)));
    await checkOptimalCount(page, 'route-histogram-1', answer.solution.quantum_result.measurement_counts, answer.meta.optimal_count);
    await axeBothAndKeep(page, 'route-solver');
    // Narrowed to a phone, the histogram is drawn again at its new width, its ticks spaced for it.
    await waitForExpression(page, `(() => { const c = document.querySelector('#route-histogram-1'); return c.querySelector('canvas').clientWidth <= c.clientWidth && Number(c.dataset.tickGap) >= Number(c.dataset.labelRoom); })()`);
    assert.ok(await fitsWidth(page));
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('route, two vehicles: no label overlaps another, a marker or an arrowhead', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/routes`);
    await page.selectOption('#route-example', '1');
    await solve(page, 'route', '#route-map');
    // In the page: every label's box (SVG units), every marker's, every arrowhead's triangle.
    const clashes = await page.evaluate(`(() => {
      const svg = document.querySelector('#route-map');
      const labels = [...svg.querySelectorAll('text.map-label')].map((t) => ({ name: t.textContent, box: t.getBBox() }));
      const markers = [...svg.querySelectorAll('circle, rect.depot')].map((m) => m.getBBox());
      const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      const inside = (p, b) => p.x >= b.x && p.x <= b.x + b.width && p.y >= b.y && p.y <= b.y + b.height;
      const clashes = [];
      labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => { if (overlap(a.box, b.box)) clashes.push(a.name + ' / ' + b.name); }));
      for (const l of labels) for (const m of markers) if (overlap(l.box, m)) clashes.push(l.name + ' / a marker');
      // Arrowheads: 18 px long ending 11 px before the node, 9 px each side; sampled along and across.
      for (const line of svg.querySelectorAll('line.leg')) {
        const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map((k) => Number(line.getAttribute(k)));
        const len = Math.hypot(x2 - x1, y2 - y1);
        const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
        for (let d = 11; d <= 29; d += 2) for (let w = -8; w <= 8; w += 2) {
          const p = { x: x2 - ux * d - uy * w * (29 - d) / 18, y: y2 - uy * d + ux * w * (29 - d) / 18 };
          for (const l of labels) if (inside(p, l.box)) clashes.push(l.name + ' / an arrowhead');
        }
      }
      return [...new Set(clashes)];
    })()`) as string[];
    assert.deepEqual(clashes, []);
    assert.equal(await page.locator('#route-map text.map-label').count(), 7);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('route on a 390 px phone: the histogram\'s x-axis labels have room', async () => {
    const { context, page, errors } = await openPage(browser, { width: 390, height: 844 }, { mobile: true });
    await page.goto(`${daemon.url}/#/solve/routes`);
    await solve(page, 'route', '#route-histogram-1 canvas');
    const chart = page.locator('#route-histogram-1');
    const gap = Number(await chart.getAttribute('data-tick-gap'));
    const room = Number(await chart.getAttribute('data-label-room'));
    assert.ok(room > 0 && gap >= room, `${gap} px between ticks, ${room} px a label needs`);
    assert.ok(await fitsWidth(page));
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('portfolio: the budget fields edit the request; return and risk as percentages', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/portfolio`);
    await page.fill('#portfolio-max-assets', '2');
    await page.fill('#portfolio-asset-0-return', '0.13');
    assert.equal((await rawProblem(page, 'portfolio'))['constraints'] !== undefined, true);
    const { body, answer } = await solve<{ solution: { expected_return: number; risk: number; measurement_counts: Counts }; meta: { optimal_count: number } }>(page, 'portfolio', '#portfolio-histogram canvas');
    assert.equal((body.problem['constraints'] as { max_assets: number }).max_assets, 2);
    assert.equal((body.problem['assets'] as { expected_return: number }[])[0]!.expected_return, 0.13);
    assert.equal(await page.locator('#portfolio-return').innerText(), `${(answer.solution.expected_return * 100).toFixed(1)} %`);
    assert.equal(await page.locator('#portfolio-risk').innerText(), `${(answer.solution.risk * 100).toFixed(1)} %`);
    await checkOptimalCount(page, 'portfolio-histogram', answer.solution.measurement_counts, answer.meta.optimal_count);
    await axeBothAndKeep(page, 'portfolio-solver');
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('Grover: records one per line, not one string full of \\n; the edited records are searched', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/grover`);
    const lines = (await page.inputValue('#grover-records')).split('\n');
    assert.equal(lines.length, 48);
    assert.equal(lines[29], 'order-29 amount=9900 status=FRAUD');
    // The fraud moved to record 5.
    const moved = lines.map((l, i) => (i === 29 ? 'order-29 amount=120 status=ok' : i === 5 ? 'order-5 amount=9900 status=FRAUD' : l));
    await page.fill('#grover-records', moved.join('\n'));
    assert.equal((await rawProblem(page, 'grover'))['dataset'], moved.join('\n'));
    const { body, answer } = await solve<{ solution: { target_index: number; confidence: number; measurement_counts: Counts }; meta: { optimal_count: number } }>(page, 'grover', '#grover-histogram canvas');
    assert.equal(body.problem['dataset'], moved.join('\n'));
    assert.equal(answer.solution.target_index, 5);
    assert.equal(await page.locator('#grover-confidence').innerText(), `${(answer.solution.confidence * 100).toFixed(1)} %`);
    await checkOptimalCount(page, 'grover-histogram', answer.solution.measurement_counts, answer.meta.optimal_count);
    await axeBothAndKeep(page, 'grover-solver');
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('clustering: the points and k edit the request; a bad line is named and not sent', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/clustering`);
    await page.fill('#clustering-k', '2');
    const points = await page.inputValue('#clustering-points');
    await page.fill('#clustering-points', `${points}\nbad line`);
    await page.locator('#clustering-fields .field-error', { hasText: 'line 31' }).waitFor();
    await page.fill('#clustering-points', points);
    const { body, answer } = await solve<{ solution: { clusters: unknown[]; inertia: number } }>(page, 'clustering', '#clustering-chart canvas');
    assert.equal(body.problem['k'], 2);
    assert.equal((body.problem['data'] as unknown[]).length, 30);
    assert.equal(answer.solution.clusters.length, 2);
    assert.match(await page.locator('#clustering-inertia').innerText(), /^[\d,]+(\.\d{1,3})?$/);
    await axeBothAndKeep(page, 'clustering-solver');
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.test('classification: the points to predict edit the request (the grid after them); regions can be turned off', async () => {
    const { context, page, errors } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(`${daemon.url}/#/solve/classification`);
    await page.fill('#classification-predict', '1, 1\n4, 3.5');
    const { body, answer } = await solve<{ solution: { predictions: { label: string; confidence: number }[] } }>(page, 'classification', '#classification-chart canvas');
    const predict = body.problem['predict'] as { features: number[] }[];
    assert.deepEqual(predict.slice(0, 2), [{ features: [1, 1] }, { features: [4, 3.5] }]);
    assert.equal(predict.length, 2 + 24 * 24);
    assert.equal(await page.locator('#classification-predictions tbody td:nth-child(4)').first().innerText(), `${(answer.solution.predictions[0]!.confidence * 100).toFixed(1)} %`);
    await axeBothAndKeep(page, 'classification-solver');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.uncheck('#classification-regions');
    const off = await solve<unknown>(page, 'classification', '#classification-no-grid');
    assert.equal((off.body.problem['predict'] as unknown[]).length, 2);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
