import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { csvSeparatorBomb, docxElementBomb, htmlIndentBomb, jsonPathBomb, markdownTableBomb, pdfStreamBomb } from './bomb-fixtures.ts';

/**
 * Decompression and expansion bombs, one per format, uploaded to a real daemon over HTTP while
 * the RSS of the daemon and of every process under it is sampled. Each gets a clear 4xx
 * (`document_too_complex` past the memory bound, `document_expands_too_far` past the output
 * bound), the daemon's own memory stays where it was, the extraction process's stays within its
 * bound, and the daemon still reads a normal document afterwards.
 *
 * The daemon runs with a 256 MiB memory bound and an 8 MiB text bound (the environment
 * variables docs/spaces.md names), so the bombs can stay small; the defaults are 512 MiB and 64 MiB.
 */
const MEMORY_MB = 256;
const TEXT_MB = 8;
const MIB = 1024 * 1024;
/** What the daemon may grow by while a bomb is read: the upload and the multipart parser's copies, never the expansion. */
const DAEMON_GROWTH_BYTES = 160 * MIB;
/** Resident memory the extraction process may reach: its bound and what Node maps from files (its binary, libraries). */
const CHILD_RSS_BYTES = (MEMORY_MB + 96) * MIB;

let daemon: DaemonProcess;

before(async () => {
  daemon = await startDaemon({ args: ['--discover', 'none'], env: { SVC_EXTRACTION_MEMORY_MB: String(MEMORY_MB), SVC_EXTRACTION_MAX_TEXT_MB: String(TEXT_MB) } });
  assert.equal((await call('POST', '/spaces', { name: 'bombs' })).status, 201);
  // The daemon as it is between requests, the extraction process started: the baseline.
  assert.equal((await upload('warm.md', '# Warm\n\nA first document starts the extraction process.')).status, 202);
});

after(async () => {
  await daemon.stop();
});

function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function descendantsOf(pid: number): number[] {
  const found = childrenOf(pid);
  for (let i = 0; i < found.length; i++) found.push(...childrenOf(found[i]!));
  return found;
}

/** Runs `work` while sampling (every 10 ms) the daemon's RSS and the largest RSS of any process under it. */
async function sampled<T>(work: () => Promise<T>): Promise<{ result: T; daemonStart: number; daemonPeak: number; childPeak: number }> {
  const pid = daemon.child.pid!;
  const daemonStart = rssOf(pid);
  let daemonPeak = daemonStart;
  let childPeak = 0;
  const sample = () => {
    daemonPeak = Math.max(daemonPeak, rssOf(pid));
    for (const child of descendantsOf(pid)) childPeak = Math.max(childPeak, rssOf(child));
  };
  const timer = setInterval(sample, 10);
  try {
    const result = await work();
    sample();
    return { result, daemonStart, daemonPeak, childPeak };
  } finally {
    clearInterval(timer);
  }
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${daemon.url}/api${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function upload(name: string, bytes: Uint8Array | string): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const response = await fetch(`${daemon.url}/api/spaces/bombs/documents`, { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const mb = (bytes: number) => `${(bytes / MIB).toFixed(0)} MB`;

/** Sends a bomb and checks the answer and the memory; returns what was measured, for the test's diagnostics. */
async function expectRefused(label: string, send: () => Promise<{ status: number; body: Record<string, unknown> }>, status: number, code: string): Promise<string> {
  const { result, daemonStart, daemonPeak, childPeak } = await sampled(send);
  const error = result.body.error as { code?: string; message?: string } | undefined;
  const where = `${label}: ${result.status} ${JSON.stringify(result.body).slice(0, 300)}; daemon ${mb(daemonStart)} → peak ${mb(daemonPeak)}, extraction process peak ${mb(childPeak)}`;
  assert.equal(result.status, status, where);
  assert.equal(error?.code, code, where);
  assert.ok(daemonPeak - daemonStart <= DAEMON_GROWTH_BYTES, `the daemon grew too much: ${where}`);
  assert.ok(childPeak <= CHILD_RSS_BYTES, `the extraction process passed its bound: ${where}`);
  const health = await fetch(`${daemon.url}/health`);
  assert.equal(health.status, 200, `${label}: the daemon is not well afterwards`);
  return `${label}: daemon ${mb(daemonStart)} → peak ${mb(daemonPeak)}, extraction process peak ${mb(childPeak)}`;
}

test('a PDF whose content stream inflates to 1 GiB of blank space: 422 document_too_complex, the daemon unchanged', async (t) => {
  const pdf = pdfStreamBomb(1024);
  assert.ok(pdf.length < 1.2 * MIB);
  t.diagnostic(await expectRefused('PDF stream bomb', () => upload('bomb.pdf', pdf), 422, 'document_too_complex'));
});

test('a DOCX within the zip guard whose 60 MiB body is millions of XML elements: 422 document_too_complex', async (t) => {
  t.diagnostic(await expectRefused('DOCX element bomb', () => upload('bomb.docx', docxElementBomb(60)), 422, 'document_too_complex'));
});

test('a 14 KB markdown table that asks for 12 million cells, as a file and as a JSON body: 422 document_too_complex', async (t) => {
  const table = markdownTableBomb(2000, 2000);
  assert.ok(table.length < 16 * 1024);
  t.diagnostic(await expectRefused('markdown table bomb (file)', () => upload('table.md', table), 422, 'document_too_complex'));
  let param: unknown;
  t.diagnostic(await expectRefused('markdown table bomb (JSON body)', async () => {
    const answer = await call('POST', '/spaces/bombs/documents', { text: table, format: 'markdown' });
    param = (answer.body.error as { param?: unknown } | undefined)?.param;
    return answer;
  }, 422, 'document_too_complex'));
  assert.equal(param, 'text');
});

test('HTML, JSON, CSV and text whose extracted text would pass the output bound: 413 document_expands_too_far', async (t) => {
  // 400 nested lists around 20,000 items: 16 MB of indentation from 200 KB.
  t.diagnostic(await expectRefused('HTML indentation bomb', () => upload('lists.html', htmlIndentBomb(400, 20_000)), 413, 'document_expands_too_far'));
  // 16 keys of 1,000 characters around 1,000 numbers: 16 MB of repeated paths from 18 KB.
  t.diagnostic(await expectRefused('JSON path bomb', () => upload('paths.json', jsonPathBomb(16, 1000, 1000)), 413, 'document_expands_too_far'));
  // Every `,` becomes ` | `: 12 MB of text from 6 MB.
  t.diagnostic(await expectRefused('CSV separator bomb', () => upload('wide.csv', csvSeparatorBomb(1000, 3000)), 413, 'document_expands_too_far'));
  // Plain text never grows; past the bound it is refused all the same.
  t.diagnostic(await expectRefused('text past the bound', () => upload('long.txt', 'plain words and more words\n'.repeat(Math.ceil((TEXT_MB + 1) * MIB / 27))), 413, 'document_expands_too_far'));
});

test('after every bomb the daemon still reads documents of each kind', async () => {
  const files: [string, string][] = [
    ['ok.md', '# Pumps\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe impeller seal is replaced every 900 hours.'],
    ['ok.html', '<h1>Valves</h1><ul><li>open</li><li>closed</li></ul>'],
    ['ok.json', '{"pump": {"rating": "4.2 bar"}}'],
    ['ok.csv', 'part,hours\nseal,900\n'],
    ['ok.txt', 'Short plain text.'],
  ];
  for (const [name, text] of files) {
    const answer = await upload(name, text);
    assert.equal(answer.status, 202, `${name}: ${JSON.stringify(answer.body)}`);
  }
  const body = await call('POST', '/spaces/bombs/documents', { text: '# Title\n\nMarkdown in a JSON body.', format: 'markdown' });
  assert.equal(body.status, 201, JSON.stringify(body.body));
});
