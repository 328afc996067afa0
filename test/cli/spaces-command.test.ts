import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliToEnd, startServerProcess } from '../helpers/daemon-process.ts';
import { freePort } from '../helpers/free-port.ts';

/** `svc spaces …` on the data dir (no daemon answers) and through a running daemon. */
function fixtureDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-spaces-cli-files-'));
  mkdirSync(join(dir, 'sub'));
  mkdirSync(join(dir, '.hidden'));
  writeFileSync(join(dir, 'kiln.md'), '# Kiln\n\nThe pottery kiln is fired to 1240 degrees for stoneware glazes.');
  writeFileSync(join(dir, 'sub', 'loom.txt'), 'The floor loom has eight shafts and a sectional warp beam.');
  writeFileSync(join(dir, 'sub', 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  writeFileSync(join(dir, '.hidden', 'secret.md'), 'never walked');
  writeFileSync(join(dir, 'broken.json'), '{"unterminated": ');
  return dir;
}

test('svc spaces on the data dir: create, add a directory (unsupported and hidden files skipped, a bad file reported), search, docs, rm', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-cli-'));
  const files = fixtureDir();
  const url = `http://127.0.0.1:${await freePort()}`;
  const common = ['--data-dir', dataDir, '--url', url];
  try {
    const created = await runCliToEnd(['spaces', 'create', 'crafts', ...common]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /Created space crafts/);
    const added = await runCliToEnd(['spaces', 'add', 'crafts', files, ...common, '--json']);
    assert.equal(added.code, 1, 'a file failed, so the exit code says so');
    const outcomes = JSON.parse(added.stdout) as { path: string; status: string; error: string | null }[];
    assert.deepEqual(outcomes.map((o) => [o.path.slice(files.length + 1), o.status]), [['broken.json', 'failed'], ['kiln.md', 'added'], ['sub/loom.txt', 'added']]);
    assert.match(outcomes[0]!.error ?? '', /JSON/i);
    const again = await runCliToEnd(['spaces', 'add', 'crafts', join(files, 'kiln.md'), ...common]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /0 added, 1 already there, 0 failed/);
    const found = await runCliToEnd(['spaces', 'search', 'crafts', 'stoneware', 'kiln', 'temperature', ...common, '--json']);
    assert.equal(found.code, 0, found.stderr);
    const hits = JSON.parse(found.stdout) as { text: string; document_id: string }[];
    assert.match(hits[0]!.text, /1240 degrees/);
    const text = await runCliToEnd(['spaces', 'search', 'crafts', 'loom shafts', ...common]);
    assert.match(text.stdout, /^1\. .*loom\.txt/m);
    const docs = await runCliToEnd(['spaces', 'docs', 'crafts', ...common, '--json']);
    assert.equal((JSON.parse(docs.stdout) as unknown[]).length, 2);
    const listed = await runCliToEnd(['spaces', 'list', ...common]);
    assert.match(listed.stdout, /crafts\s+2\s+2/);
    const removedDoc = await runCliToEnd(['spaces', 'rm', 'crafts', hits[0]!.document_id, ...common]);
    assert.equal(removedDoc.code, 0, removedDoc.stderr);
    const refused = await runCliToEnd(['spaces', 'rm', 'crafts', ...common]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--yes/);
    const removed = await runCliToEnd(['spaces', 'rm', 'crafts', '--yes', ...common]);
    assert.equal(removed.code, 0, removed.stderr);
    const missing = await runCliToEnd(['spaces', 'search', 'crafts', 'kiln', ...common]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^svc spaces search: .*crafts/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
});

test('svc spaces through a running daemon: the daemon sees what the CLI added at once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-cli-daemon-'));
  const files = fixtureDir();
  const daemon = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--discover', 'none']);
  try {
    const common = ['--url', daemon.url];
    assert.equal((await runCliToEnd(['spaces', 'create', 'crafts', ...common])).code, 0);
    const added = await runCliToEnd(['spaces', 'add', 'crafts', join(files, 'sub'), ...common]);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /1 added/);
    const response = await fetch(`${daemon.url}/api/spaces/crafts/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'loom' }) });
    const body = (await response.json()) as { data: { text: string; source: string }[] };
    assert.match(body.data[0]!.text, /eight shafts/);
    assert.equal(body.data[0]!.source, join(files, 'sub', 'loom.txt'));
    const bad = await runCliToEnd(['spaces', 'add', 'crafts', join(files, 'broken.json'), ...common]);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout + bad.stderr, /broken\.json/);
  } finally {
    await daemon.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
});

test('svc spaces eval: the labelled set in a temporary store, as JSON; a bad mode exits 2', async () => {
  const run = await runCliToEnd(['spaces', 'eval', '--modes', 'bm25', '--json']);
  assert.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { modes: { mode: string; queries: number; recallAt10: number }[]; stale: { rejectionRate: number; staleResults: number } };
  assert.equal(report.modes.length, 1);
  assert.equal(report.modes[0]!.mode, 'bm25');
  assert.ok(report.modes[0]!.queries >= 200);
  assert.ok(report.modes[0]!.recallAt10 > 0.5);
  assert.equal(report.stale.staleResults, 0);
  assert.equal(report.stale.rejectionRate, 1);
  const bad = await runCliToEnd(['spaces', 'eval', '--modes', 'magic']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^svc spaces eval: --modes: 'magic'/);
});
