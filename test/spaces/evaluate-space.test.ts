import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../src/shared/api-error.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import type { SpaceLibrary } from '../../src/spaces/space-types.ts';
import { evaluateSpace } from '../../src/spaces/eval/evaluate-space.ts';
import { formatEvalReport } from '../../src/spaces/eval/format-eval-report.ts';
import { generateLabelledSet } from '../../src/spaces/eval/labelled-set.ts';
import { runSpacesEval } from '../../src/spaces/eval/run-spaces-eval.ts';

// A small set: one family of two documents per domain (~110 queries), on a real library in a temp dir.
const smallSet = () => generateLabelledSet({ seed: 'evaluate-space-test', familiesPerDomain: 1, subjectsPerFamily: 2 });

async function withLibrary<T>(fn: (library: SpaceLibrary) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-eval-test-'));
  const library = await openSpaceLibrary({ dataDir });
  try {
    return await fn(library);
  } finally {
    await library.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

test('evaluateSpace on a real library: every figure is there and stale text is never returned', async () => {
  const set = smallSet();
  const report = await withLibrary((library) => evaluateSpace(library, set, { space: 'eval-test' }));
  assert.equal(report.set.queries, set.queries.length);
  assert.equal(report.ingest.documents, set.documents.length + set.stale.length);
  assert.ok(report.ingest.bytes > 0 && report.ingest.mbPerSecond > 0);
  assert.deepEqual(report.modes.map((m) => m.mode), ['hybrid', 'bm25', 'dense']);
  for (const mode of report.modes) {
    assert.equal(mode.queries, set.queries.length);
    assert.ok(mode.recallAt5 <= mode.recallAt10 && mode.recallAt10 <= 1);
    assert.ok(mode.mrr <= mode.recallAt10);
    assert.equal(mode.latency.samples, set.queries.length);
    assert.ok(mode.latency.p50Ms <= mode.latency.p99Ms);
    assert.equal(mode.byKind.reduce((sum, k) => sum + k.queries, 0), set.queries.length);
    // Queries that share the passage's own words are found by every mode on a small set.
    assert.ok(mode.byKind.find((k) => k.kind === 'keyword')!.recallAt10 >= 0.8, `${mode.mode} keyword recall`);
  }
  assert.equal(report.stale.rejectionRate, 1);
  assert.equal(report.stale.staleResults, 0);
  for (const mode of report.stale.modes) {
    assert.ok(mode.foundBeforeChange > 0.5, `${mode.mode}: the stale queries reached the old text before the change`);
    assert.ok(mode.newTextFound > 0.5, `${mode.mode}: the revision is searchable`);
  }
  assert.equal(typeof report.hybridBeatsBoth, 'boolean');
  const text = formatEvalReport(report);
  assert.match(text, /\| hybrid \| \d+ \|/);
  assert.match(text, /rejection/);
});

test('the stale check fires when a library keeps old text', async () => {
  const set = smallSet();
  const report = await withLibrary((library) => {
    // A library that acknowledges replace and delete but changes nothing: old text stays searchable.
    const forgetful = new Proxy(library, {
      get(target, property) {
        if (property === 'replaceDocument') return async (space: string, id: string) => target.getDocument(space, id);
        if (property === 'deleteDocument') return async () => undefined;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return evaluateSpace(forgetful, set, { space: 'eval-forgetful', modes: ['bm25'] });
  });
  assert.ok(report.stale.staleResults > 0);
  assert.ok(report.stale.rejectionRate < 1);
  assert.equal(report.hybridBeatsBoth, null);
});

test('runSpacesEval: a temp library by default, and modes are checked', async () => {
  const report = await runSpacesEval({ modes: ['bm25'] });
  assert.deepEqual(report.modes.map((m) => m.mode), ['bm25']);
  assert.ok(report.set.queries >= 200);
  assert.equal(report.stale.rejectionRate, 1);
  await assert.rejects(runSpacesEval({ modes: ['bm25', 'fuzzy' as 'bm25'] }), (error: unknown) => error instanceof ApiError && error.status === 400 && error.param === 'modes.1');
  await assert.rejects(runSpacesEval({ modes: [] }), (error: unknown) => error instanceof ApiError && error.status === 400);
});

test('runSpacesEval in a given data dir leaves no space behind', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-eval-dir-'));
  try {
    await runSpacesEval({ dataDir, modes: ['dense'] });
    const library = await openSpaceLibrary({ dataDir });
    try {
      assert.deepEqual(await library.listSpaces(), []);
    } finally {
      await library.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
