import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';
import { HashedEmbedder } from '../../src/spaces/hashed-embedder.ts';

/**
 * The spaces API of a real daemon over HTTP: spaces, JSON documents, multipart uploads as
 * ingest jobs, search in every mode, replace/delete never leaving old text findable, bad uploads
 * as clear 4xx, persistence across a restart.
 */
let dataDir: string;
let daemon: DaemonProcess;

async function start(): Promise<DaemonProcess> {
  return startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--discover', 'none', '--model', `tiny=${tinyModelPath()}`]);
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-api-'));
  daemon = await start();
});

after(async () => {
  await daemon.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const response = await fetch(`${daemon.url}/api${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function upload(space: string, files: { name: string; bytes: Uint8Array | string; type?: string }[], fields: Record<string, string> = {}, query = '?wait=true'): Promise<Answer> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const file of files) form.append('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  const response = await fetch(`${daemon.url}/api/spaces/${encodeURIComponent(space)}/documents${query}`, { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface SearchHit { text: string; chunk_id: string; document_id: string; title: string | null; page: number | null; heading_path: string[]; snippet: string; space: string; score: number }

async function search(space: string, query: string, extra: Record<string, unknown> = {}): Promise<SearchHit[]> {
  const answer = await call<{ data: SearchHit[] }>('POST', `/spaces/${space}/search`, { query, ...extra });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data;
}

function errorCode(answer: Answer): unknown {
  return (answer.body as { error?: { code?: unknown } }).error?.code;
}

test('spaces: create, list, get, delete; names checked; duplicates in any case are 409; prototype names are just names', async () => {
  const created = await call('POST', '/spaces', { name: 'notes-1' });
  assert.equal(created.status, 201);
  assert.equal(created.body.name, 'notes-1');
  assert.equal(created.body.document_count, 0);
  assert.equal(created.body.embedder, 'svc-hashed-embed-v2');
  assert.equal(errorCode(await call('POST', '/spaces', { name: 'NOTES-1' })), 'space_exists');
  assert.equal((await call('POST', '/spaces', { name: 'NOTES-1' })).status, 409);
  for (const bad of ['', 'a b', '../x', 'x/y', '-lead', 'a'.repeat(65), '__proto__']) {
    const answer = await call('POST', '/spaces', { name: bad });
    assert.equal(answer.status, 400, bad);
    assert.equal(errorCode(answer), 'invalid_space_name', bad);
  }
  assert.equal((await call('POST', '/spaces', { name: 'x', extra: 1 })).status, 400);
  assert.equal((await call('POST', '/spaces', { name: 42 })).status, 400);
  for (const name of ['constructor', 'toString']) {
    assert.equal((await call('POST', '/spaces', { name })).status, 201, name);
    assert.equal((await call('GET', `/spaces/${name}`)).body.name, name);
  }
  assert.equal((await call('GET', '/spaces/hasOwnProperty')).status, 404);
  const list = await call<{ data: { name: string }[] }>('GET', '/spaces');
  assert.deepEqual(list.body.data.map((s) => s.name).filter((n) => ['notes-1', 'constructor', 'toString'].includes(n)).sort(), ['constructor', 'notes-1', 'toString']);
  assert.equal((await call('DELETE', '/spaces/constructor')).status, 200);
  assert.equal(errorCode(await call('GET', '/spaces/constructor')), 'space_not_found');
  assert.equal((await call('DELETE', '/spaces/constructor')).status, 404);
});

test('documents: JSON add is idempotent by content, replace and delete never leave old text findable in any mode', async () => {
  await call('POST', '/spaces', { name: 'docs-json' });
  const text = '# Pumps\n\nThe centrifugal pump is rated for 4.2 bar of pressure at the outlet.\n\n## Service\n\nReplace the impeller seal every 900 operating hours.';
  const first = await call('POST', '/spaces/docs-json/documents', { text, format: 'markdown', title: 'Pump manual', metadata: { team: 'plant', rev: 3 } });
  assert.equal(first.status, 201, JSON.stringify(first.body));
  const again = await call('POST', '/spaces/docs-json/documents', { text, format: 'markdown' });
  assert.equal(again.status, 200);
  assert.equal(again.body.id, first.body.id);
  const id = String(first.body.id);
  const got = await call('GET', `/spaces/docs-json/documents/${id}?include=text`);
  assert.equal(got.body.text !== undefined, true);
  assert.equal((await call('GET', `/spaces/docs-json/documents/${id}`)).body.text, undefined);
  // …/chunks: the passages in document order, with the ids search names as chunk_id, a page at a time.
  const chunked = await call('GET', `/spaces/docs-json/documents/${id}/chunks`);
  assert.equal(chunked.status, 200, JSON.stringify(chunked.body));
  const chunks = chunked.body.data as { id: string; position: number; heading_path: string[]; text: string }[];
  assert.equal(chunks.length, first.body.chunk_count);
  assert.deepEqual(chunks.map((c) => c.position), chunks.map((_, i) => i));
  assert.equal(chunked.body.next, null);
  const onePage = await call('GET', `/spaces/docs-json/documents/${id}/chunks?limit=1`);
  assert.equal((onePage.body.data as unknown[]).length, 1);
  assert.equal(onePage.body.next, chunks.length > 1 ? chunks[0]!.id : null);
  assert.equal(errorCode(await call('GET', `/spaces/docs-json/documents/${id}/chunks?limit=1001`)), 'invalid_request');
  assert.equal(errorCode(await call('GET', `/spaces/docs-json/documents/${id}/chunks?after=chk_nope`)), 'invalid_cursor');
  // The old ?include=chunks is refused with a message that says where the chunks went.
  const oldInclude = await call('GET', `/spaces/docs-json/documents/${id}?include=chunks`);
  assert.equal(errorCode(oldInclude), 'invalid_request');
  assert.match(JSON.stringify(oldInclude.body), /documents\/:id\/chunks/);
  assert.equal(errorCode(await call('GET', `/spaces/docs-json/documents/${id}?include=vectors`)), 'invalid_request');
  for (const mode of ['hybrid', 'bm25', 'dense']) {
    const hits = await search('docs-json', 'impeller seal replacement hours', { mode });
    assert.ok(hits.some((h) => h.text.includes('900 operating hours')), mode);
  }
  const hit = (await search('docs-json', 'impeller seal'))[0]!;
  // A short subsection joins its parent's chunk, which cites the parent's heading.
  assert.deepEqual(hit.heading_path, ['Pumps']);
  const listed = chunks.find((c) => c.id === hit.chunk_id);
  assert.deepEqual([listed?.text, listed?.heading_path], [hit.text, hit.heading_path], 'the search hit is the listed chunk');
  assert.equal(hit.title, 'Pump manual');
  assert.match(hit.snippet, /«/);
  // Replace: the old passage is gone from every mode at once.
  const replaced = await call('PUT', `/spaces/docs-json/documents/${id}`, { text: 'The diaphragm pump now runs on compressed air only.', title: 'Pump manual v2' });
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
  for (const mode of ['hybrid', 'bm25', 'dense']) {
    const hits = await search('docs-json', 'impeller seal every 900 operating hours', { mode, top_k: 100 });
    assert.ok(hits.every((h) => !h.text.includes('impeller')), `${mode}: old text came back`);
  }
  assert.ok((await search('docs-json', 'diaphragm compressed air')).some((h) => h.document_id === id));
  // Filters by document and metadata.
  const other = await call('POST', '/spaces/docs-json/documents', { text: 'The diaphragm valve is inspected monthly.', metadata: { team: 'lab' } });
  const byDoc = await search('docs-json', 'diaphragm', { filter: { document_ids: [String(other.body.id)] } });
  assert.ok(byDoc.length > 0 && byDoc.every((h) => h.document_id === other.body.id));
  const byMeta = await search('docs-json', 'diaphragm', { filter: { metadata: { team: 'lab' } } });
  assert.ok(byMeta.length > 0 && byMeta.every((h) => h.document_id === other.body.id));
  // Delete.
  assert.equal((await call('DELETE', `/spaces/docs-json/documents/${id}`)).status, 200);
  assert.equal(errorCode(await call('GET', `/spaces/docs-json/documents/${id}`)), 'document_not_found');
  for (const mode of ['hybrid', 'bm25', 'dense']) {
    assert.ok((await search('docs-json', 'diaphragm pump compressed air', { mode, top_k: 100 })).every((h) => h.document_id !== id), mode);
  }
  const space = await call('GET', '/spaces/docs-json');
  assert.equal(space.body.document_count, 1);
});

test('uploads: every file type round-trips through a multipart job with citations (pages for PDF)', async () => {
  await call('POST', '/spaces', { name: 'files' });
  const { PDFDocument, StandardFonts } = await import('pdf-lib');
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const line of ['Page one talks about greenhouse ventilation louvres.', 'Page two says the boiler flue must be swept every autumn.']) {
    pdf.addPage([400, 300]).drawText(line, { x: 20, y: 250, size: 10, font });
  }
  const docx = await import('docx');
  const word = new docx.Document({ sections: [{ children: [
    new docx.Paragraph({ text: 'Warehouse rules', heading: docx.HeadingLevel.HEADING_1 }),
    new docx.Paragraph({ text: 'Forklifts keep to the yellow lanes near loading dock seven.' }),
  ] }] });
  const docxBytes = new Uint8Array(await docx.Packer.toBuffer(word));
  const files = [
    { name: 'a.txt', bytes: 'The lighthouse keeper logs the fog horn tests on Tuesdays.' },
    { name: 'b.md', bytes: '# Orchard\n\n## Pruning\n\nApple trees are pruned in late winter before bud break.' },
    { name: 'c.html', bytes: '<html><head><title>Bees</title><script>var x="hidden";</script></head><body><h1>Hives</h1><p>Beekeepers add a honey super when the brood box is full.</p></body></html>' },
    { name: 'd.csv', bytes: 'city,landmark\nLisbon,Belem tower\nPorto,Dom Luis bridge\n' },
    { name: 'e.json', bytes: JSON.stringify({ telescope: { aperture_mm: 203, mount: 'equatorial fork mount' } }) },
    { name: 'f.pdf', bytes: await pdf.save(), type: 'application/pdf' },
    { name: 'g.docx', bytes: docxBytes },
  ];
  const queued = await upload('files', files, {}, '');
  assert.equal(queued.status, 202, JSON.stringify(queued.body));
  const jobId = String(queued.body.id);
  let job = queued.body as { status: string; files: { status: string; filename: string }[] };
  for (let i = 0; i < 200 && job.status !== 'completed' && job.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await call<typeof job>('GET', `/spaces/files/jobs/${jobId}`)).body;
  }
  assert.equal(job.status, 'completed', JSON.stringify(job));
  assert.deepEqual(job.files.map((f) => f.status), files.map(() => 'added'));
  const expectations: [string, string][] = [
    ['fog horn tests', 'lighthouse keeper'], ['pruned late winter', 'bud break'], ['honey super brood box', 'honey super'],
    ['Dom Luis bridge', 'Porto'], ['equatorial fork mount', 'equatorial fork mount'], ['boiler flue swept', 'swept every autumn'],
    ['forklifts yellow lanes', 'yellow lanes'],
  ];
  for (const [query, expected] of expectations) {
    const hits = await search('files', query);
    assert.ok(hits[0]?.text.includes(expected), `${query}: ${JSON.stringify(hits[0])}`);
  }
  assert.equal((await search('files', 'boiler flue swept'))[0]!.page, 2);
  assert.equal((await search('files', 'ventilation louvres'))[0]!.page, 1);
  assert.ok((await search('files', 'hidden')).every((h) => !h.text.includes('var x')));
  assert.deepEqual((await search('files', 'pruned late winter'))[0]!.heading_path, ['Orchard', 'Pruning']);
  assert.equal(errorCode(await call('GET', '/spaces/files/jobs/job_nope')), 'job_not_found');
});

test('uploads: bad files are clear 4xx and queue nothing', async () => {
  await call('POST', '/spaces', { name: 'bad-uploads' });
  const cases: [string, { name: string; bytes: Uint8Array | string }[], number, string][] = [
    ['png', [{ name: 'x.png', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]) }], 415, 'unsupported_document_type'],
    ['elf', [{ name: 'x.txt', bytes: new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0]) }], 415, 'unsupported_document_type'],
    ['empty', [{ name: 'x.txt', bytes: '' }], 422, 'document_empty'],
    ['corrupt pdf', [{ name: 'x.pdf', bytes: '%PDF-1.7\n1 0 obj garbage that is not a pdf' }], 422, 'document_unreadable'],
    ['traversal', [{ name: '../../etc/passwd', bytes: 'hello' }], 400, 'invalid_filename'],
    ['bad json', [{ name: 'x.json', bytes: '{"a": ' }], 422, 'document_unreadable'],
  ];
  for (const [what, files, status, code] of cases) {
    const answer = await upload('bad-uploads', files);
    assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    assert.equal(errorCode(answer), code, what);
  }
  // A zip bomb dressed as a .docx: refused from its directory, never inflated.
  const { ZipFile } = await import('yazl');
  const bomb = await new Promise<Buffer>((resolve) => {
    const zip = new ZipFile();
    zip.addBuffer(Buffer.from('<?xml version="1.0"?><Types/>'), '[Content_Types].xml');
    zip.addBuffer(Buffer.alloc(200 * 1024 * 1024), 'word/document.xml');
    const parts: Buffer[] = [];
    zip.outputStream.on('data', (d: Buffer) => parts.push(d)).on('end', () => resolve(Buffer.concat(parts)));
    zip.end();
  });
  const answer = await upload('bad-uploads', [{ name: 'bomb.docx', bytes: bomb }]);
  assert.ok(answer.status === 413 || answer.status === 422, JSON.stringify(answer.body));
  assert.equal(errorCode(answer), 'document_expands_too_far');
  // Not multipart-shaped, unknown form fields, no file at all.
  const broken = await fetch(`${daemon.url}/api/spaces/bad-uploads/documents`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated' });
  assert.equal(broken.status, 400);
  assert.equal((await upload('bad-uploads', [{ name: 'a.txt', bytes: 'x' }], { colour: 'red' })).status, 400);
  assert.equal(errorCode(await upload('bad-uploads', [], { title: 'nothing' })), 'invalid_upload');
  assert.equal((await call('POST', '/spaces/bad-uploads/documents', { text: 'x', unknown: true })).status, 400);
  assert.equal((await call('POST', '/spaces/no-such-space/documents', { text: 'x' })).status, 404);
  const space = await call('GET', '/spaces/bad-uploads');
  assert.equal(space.body.document_count, 0);
});

test('search: bad queries are 400, unknown spaces 404, FTS syntax is harmless, unified search names spaces', async () => {
  await call('POST', '/spaces', { name: 'search-a' });
  await call('POST', '/spaces', { name: 'search-b' });
  await call('POST', '/spaces/search-a/documents', { text: 'Copper kettles tarnish in salty air.' });
  await call('POST', '/spaces/search-b/documents', { text: 'Brass kettles are polished with lemon and salt.' });
  assert.equal((await call('POST', '/spaces/search-a/search', { query: '   ' })).status, 400);
  assert.equal((await call('POST', '/spaces/search-a/search', { query: 'x', top_k: 0 })).status, 400);
  assert.equal((await call('POST', '/spaces/search-a/search', { query: 'x', top_k: 101 })).status, 400);
  assert.equal((await call('POST', '/spaces/search-a/search', { query: 'x', mode: 'magic' })).status, 400);
  assert.equal((await call('POST', '/spaces/search-a/search', { query: 'x'.repeat(4001) })).status, 400);
  assert.equal((await call('POST', '/spaces/search-a/search', { query: 'x', nope: 1 })).status, 400);
  assert.equal((await call('POST', '/spaces/nope/search', { query: 'x' })).status, 404);
  for (const hostile of ['"', 'kettle*', 'NEAR(copper kettle)', 'copper AND', '-salty', 'col:copper', '(((', "'; DROP TABLE chunks; --"]) {
    const answer = await call('POST', '/spaces/search-a/search', { query: hostile, mode: 'bm25' });
    assert.equal(answer.status, 200, `${hostile}: ${JSON.stringify(answer.body)}`);
  }
  const all = await call<{ data: SearchHit[] }>('POST', '/search', { query: 'kettles salt' });
  const named = new Set(all.body.data.map((h) => h.space));
  assert.ok(named.has('search-a') && named.has('search-b'), JSON.stringify([...named]));
  const some = await call<{ data: SearchHit[] }>('POST', '/search', { query: 'kettles salt', spaces: ['search-b'] });
  assert.ok(some.body.data.length > 0 && some.body.data.every((h) => h.space === 'search-b'));
  assert.equal((await call('POST', '/search', { query: 'kettles', spaces: ['nope'] })).status, 404);
});

test('spaces survive a restart; /health reports retrieval; the built-in embedder is a model', async () => {
  await call('POST', '/spaces', { name: 'durable' });
  await call('POST', '/spaces/durable/documents', { text: 'The observatory dome rotates on twelve steel wheels.' });
  await daemon.stop();
  daemon = await start();
  const hits = await search('durable', 'dome steel wheels');
  assert.ok(hits[0]?.text.includes('twelve steel wheels'));
  const health = (await (await fetch(`${daemon.url}/health`)).json()) as { retrieval: Record<string, unknown> };
  assert.equal(health.retrieval.memory_search, 'ok');
  assert.equal(health.retrieval.unified_search, 'ok');
  assert.equal(health.retrieval.bridge, 'ok');
  const models = (await (await fetch(`${daemon.url}/v1/models`)).json()) as { data: { id: string; capabilities: string[] }[] };
  const builtin = models.data.find((m) => m.id === 'svc-hashed-embed-v2');
  assert.deepEqual(builtin?.capabilities, ['embeddings']);
  // v1 is not listed (new work uses v2) but still served, so a v1 space's vectors can be reproduced.
  assert.equal(models.data.some((m) => m.id === 'svc-hashed-embed-v1'), false);
  const embed = async (model: string) => (await (await fetch(`${daemon.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'KZ35 pump' }) })).json()) as { model: string; data: { embedding: number[] }[] };
  const [v1, v2] = [await embed('svc-hashed-embed-v1'), await embed('svc-hashed-embed-v2')];
  assert.deepEqual(v1.data[0]!.embedding, Array.from(new HashedEmbedder({ version: 1 }).embedText('KZ35 pump')));
  assert.deepEqual(v2.data[0]!.embedding, Array.from(new HashedEmbedder().embedText('KZ35 pump')));
});
