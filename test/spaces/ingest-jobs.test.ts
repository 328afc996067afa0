import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/shared/api-error.ts';
import { reduceMemoryNow } from '../../src/shared/memory-reducing-gc.ts';
import { IngestJobs } from '../../src/spaces/ingest-jobs.ts';

const files = ['a.md', 'b.md', 'c.md', 'd.md'].map((filename, i) => ({ filename, textBytes: 100 * (i + 1) }));

test('ingest jobs: files settle as the work reports them; a file never reported fails with what the work threw', async () => {
  const jobs = new IngestJobs({ maxQueuedBytes: 1e6 });
  const seen: string[][] = [];
  const job = jobs.submit('kb', files, async (report) => {
    // The work starts within submit: let it return first.
    await new Promise((resolve) => setImmediate(resolve));
    seen.push(jobs.get('kb', job.id).files.map((f) => f.status));
    report(2, { documentId: 'doc_c', status: 'added' });
    report(0, { error: ApiError.invalidRequest('bad text', 'text', 'invalid_document') });
    // A second report of a settled file changes nothing.
    report(2, { error: new Error('late') });
    assert.deepEqual(jobs.get('kb', job.id).progress, { files_total: 4, files_done: 2, text_bytes_total: 1000, text_bytes_done: 400 });
    throw ApiError.notFound('No space named kb.', 'space_not_found', 'space');
  });
  const done = (await jobs.wait(job.id))!;
  assert.deepEqual(seen, [['running', 'running', 'running', 'running']]);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.files.map((f) => [f.status, f.document_id, f.error?.code ?? null]), [
    ['failed', null, 'invalid_document'],
    ['failed', null, 'space_not_found'],
    ['added', 'doc_c', null],
    ['failed', null, 'space_not_found'],
  ]);
  assert.deepEqual(done.progress, { files_total: 4, files_done: 4, text_bytes_total: 1000, text_bytes_done: 1000 });
  await jobs.close();
});

test('ingest jobs: an unexpected error is not shown, and a job whose every file failed is failed', async () => {
  const jobs = new IngestJobs({ maxQueuedBytes: 1e6 });
  const job = jobs.submit('kb', files.slice(0, 2), async (report) => {
    report(1, { error: new Error('SQLITE_FULL: database or disk is full') });
  });
  const done = (await jobs.wait(job.id))!;
  assert.equal(done.status, 'failed');
  for (const file of done.files) {
    assert.equal(file.status, 'failed');
    assert.equal(file.error?.code, 'ingest_failed');
    assert.doesNotMatch(file.error.message, /SQLITE/);
  }
  await jobs.close();
});

// What the route's work function closes over: the upload's bytes, its extracted text and chunks.
// Finished jobs are kept an hour for their records; a million chunks ingested in an hour kept
// every upload resident (the daemon held 4.0 GB, 1.8 GB once this was fixed).
const heldUpload = (): { upload: WeakRef<object>; work: (report: (index: number, outcome: { documentId: string; status: 'added' }) => void) => Promise<void> } => {
  const upload = { bytes: new Uint8Array(1 << 20) };
  return {
    upload: new WeakRef(upload),
    work: async (report) => {
      report(0, { documentId: `doc_${upload.bytes.length}`, status: 'added' });
    },
  };
};

test('ingest jobs: a finished job keeps its record but not its work, nor the upload the work closed over', async () => {
  const jobs = new IngestJobs({ maxQueuedBytes: 1e9 });
  const ran = heldUpload();
  const job = jobs.submit('kb', files.slice(0, 1), ran.work);
  // A second job keeps the queue busy, so the third is still queued when the daemon shuts down:
  // it fails without running, and must let go too.
  jobs.submit('kb', files.slice(0, 1), () => new Promise<void>((resolve) => setTimeout(resolve, 50)));
  const queued = heldUpload();
  const never = jobs.submit('kb', files.slice(1, 2), queued.work);
  // The test drops its own references to the work functions; only the jobs could still hold them.
  delete (ran as { work?: unknown }).work;
  delete (queued as { work?: unknown }).work;
  assert.equal((await jobs.wait(job.id))?.files[0]?.document_id, `doc_${1 << 20}`);
  await jobs.close();
  assert.equal(jobs.get('kb', never.id).files[0]?.error?.code, 'server_shutting_down');
  // WeakRef targets stay alive until the turn that made them ends.
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(reduceMemoryNow(), 'this runtime gives no gc()');
  assert.equal(ran.upload.deref(), undefined, 'the finished job still holds its upload');
  assert.equal(queued.upload.deref(), undefined, 'the job failed at shutdown still holds its upload');
  assert.equal(jobs.get('kb', job.id).status, 'completed');
});
