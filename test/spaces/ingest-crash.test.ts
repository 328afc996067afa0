import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startServerProcess, type DaemonProcess } from '../helpers/daemon-process.ts';

/**
 * kill -9 in the middle of an ingest, then a restart: never half a document. Each round kills
 * the daemon at a different moment of a large upload's job (embedding, or writing); the store is
 * then checked row by row, and the daemon restarted on it must serve it and finish the upload.
 */
function bigMarkdown(seed: number): string {
  const sections: string[] = [];
  for (let s = 0; s < 1500; s++) {
    sections.push(`## Section ${seed}-${s}\n\nThe ${s}th widget of batch ${seed} is calibrated at ${(s * 7) % 97} degrees before the seal test. ` +
      `Operators record the torque of fixture ${s % 13} and the humidity of bay ${s % 5} in the log, then sign the sheet for inspection ${s}.`.repeat(3));
  }
  return `# Batch ${seed}\n\n${sections.join('\n\n')}`;
}

function checkStore(dataDir: string): { documents: number; chunks: number } {
  const db = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'));
  try {
    assert.equal((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
    const documents = db.prepare('SELECT id, chunk_count FROM documents').all() as { id: number; chunk_count: number }[];
    for (const doc of documents) {
      const { n } = db.prepare('SELECT count(*) AS n FROM chunks WHERE document_id = ?').get(doc.id) as { n: number };
      assert.equal(n, doc.chunk_count, `document ${doc.id}: ${n} chunks stored, ${doc.chunk_count} recorded`);
      assert.ok(n > 0);
    }
    const space = db.prepare('SELECT document_count, chunk_count FROM spaces WHERE name = ?').get('crash') as { document_count: number; chunk_count: number };
    const { chunks } = db.prepare('SELECT count(*) AS chunks FROM chunks').get() as { chunks: number };
    assert.equal(space.document_count, documents.length);
    assert.equal(space.chunk_count, chunks);
    return { documents: documents.length, chunks };
  } finally {
    db.close();
  }
}

test('ingest: kill -9 mid-ingest leaves whole documents or none, and the restarted daemon finishes the work', { timeout: 180_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-crash-'));
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--discover', 'none'];
  let daemon: DaemonProcess = await startServerProcess(args);
  try {
    await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'crash' }) });
    const texts = [0, 1, 2].map(bigMarkdown);
    for (const [round, delayMs] of [0, 250, 700].entries()) {
      const form = new FormData();
      form.append('file', new Blob([texts[round]!]), `batch-${round}.md`);
      const queued = await fetch(`${daemon.url}/api/spaces/crash/documents`, { method: 'POST', body: form });
      assert.equal(queued.status, 202);
      const job = (await queued.json()) as { id: string };
      // Wait until the job is running, then a little more, then kill without warning.
      for (let i = 0; i < 200; i++) {
        const state = (await (await fetch(`${daemon.url}/api/spaces/crash/jobs/${job.id}`)).json()) as { status: string };
        if (state.status !== 'queued') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, delayMs));
      await daemon.stop('SIGKILL');
      const before = checkStore(dataDir);
      assert.ok(before.documents <= round + 1);
      daemon = await startServerProcess(args);
      // The restarted daemon serves what is there; the same upload again completes it (or finds it whole).
      const again = new FormData();
      again.append('file', new Blob([texts[round]!]), `batch-${round}.md`);
      const done = await fetch(`${daemon.url}/api/spaces/crash/documents?wait=true`, { method: 'POST', body: again });
      const finished = (await done.json()) as { status: string; files: { status: string }[] };
      assert.equal(finished.status, 'completed');
      assert.ok(['added', 'unchanged'].includes(finished.files[0]!.status));
      assert.equal(checkStore(dataDir).documents, round + 1);
      const hits = (await (await fetch(`${daemon.url}/api/spaces/crash/search`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `widget of batch ${round} calibrated`, mode: 'bm25' }),
      })).json()) as { data: { text: string }[] };
      assert.ok(hits.data.length > 0);
    }
  } finally {
    await daemon.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
