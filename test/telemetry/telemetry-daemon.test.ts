/**
 * Telemetry through real daemons: a capture server on loopback stands in for the endpoint. One
 * daemon runs `--telemetry basic`, one `--telemetry none` with an endpoint configured all the
 * same, both with a short report interval (SVC_TELEMETRY_INTERVAL_MS, the testing knob).
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { runCliToEnd, startDaemon, startServerProcess, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';

interface Captured {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Distinctive strings in a solve problem and a chat prompt: they must never reach the endpoint. */
const PROBLEM_SECRET = 'zebra-quokka-7731';
const PROMPT_SECRET = 'marmalade-ostrich-4410';

const captured: Captured[] = [];
let capture: Server;
let captureUrl: string;
let dataDir: string;
let basic: DaemonProcess;
let none: DaemonProcess;

const reportsTo = (path: string) => captured.filter((c) => c.url.split('?')[0] === path);

async function until(what: string, ready: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

before(async () => {
  capture = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      captured.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
  const address = capture.address();
  captureUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  dataDir = mkdtempSync(join(tmpdir(), 'svc-telemetry-'));
  const env = { SVC_TELEMETRY_INTERVAL_MS: '300' };
  [basic, none] = await Promise.all([
    startServerProcess(
      ['serve', '--port', '0', '--data-dir', dataDir, '--discover', 'none', '--model', `tiny=${tinyModelPath()}`, '--telemetry', 'basic', '--telemetry-endpoint', `${captureUrl}/basic?token=k3y`],
      { env },
    ),
    startDaemon({ withModel: false, args: ['--telemetry', 'none', '--telemetry-endpoint', `${captureUrl}/none`], env }),
  ]);
});

after(async () => {
  await Promise.all([basic?.stop(), none?.stop()]);
  await new Promise((resolve) => capture.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (daemon: DaemonProcess, path: string, body?: unknown) =>
  fetch(`${daemon.url}${path}`, { method: 'POST', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

/** A POST with headers fetch will not send (Host, Origin); resolves with the status. */
function guardedPost(daemon: DaemonProcess, path: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, daemon.url), { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
    request.end(text);
  });
}

function jobLines(): Record<string, unknown>[] {
  const file = join(dataDir, 'logs', 'jobs.ndjson');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

function assertReport(report: Captured): void {
  assert.equal(report.method, 'POST');
  const body = JSON.parse(report.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['daily_job_count', 'uptime_seconds'], report.body);
  assert.ok(Number.isInteger(body.uptime_seconds) && (body.uptime_seconds as number) >= 0);
  assert.ok(Number.isInteger(body.daily_job_count) && (body.daily_job_count as number) >= 0);
  // Nothing that identifies the machine, the user or the software: only what HTTP needs and the type.
  assert.deepEqual(Object.keys(report.headers).sort(), ['connection', 'content-length', 'content-type', 'host']);
  assert.equal(report.headers['content-type'], 'application/json');
  assert.equal(report.headers.connection, 'close');
}

test('basic sends exactly uptime_seconds and daily_job_count, without identity; none sends nothing', async () => {
  await until('three basic reports', () => reportsTo('/basic').length >= 3);
  for (const report of reportsTo('/basic')) assertReport(report);
  // The endpoint is used as configured (its query too), though it is shown without the query.
  assert.equal(reportsTo('/basic')[0]!.url, '/basic?token=k3y');
  // The none daemon has had as many intervals as the basic one took for three reports.
  assert.deepEqual(reportsTo('/none'), []);
  assert.equal(captured.length, reportsTo('/basic').length);

  const health = (await (await fetch(`${basic.url}/health`)).json()) as Record<string, unknown>;
  assert.equal(health.telemetry, 'basic');
  assert.ok(typeof health.telemetry_last_sent_at === 'string' && !Number.isNaN(Date.parse(health.telemetry_last_sent_at)));
  const view = (await (await fetch(`${basic.url}/telemetry`)).json()) as Record<string, unknown>;
  assert.equal(view.mode, 'basic');
  assert.equal(view.endpoint, `${captureUrl}/basic`);

  const noneHealth = (await (await fetch(`${none.url}/health`)).json()) as Record<string, unknown>;
  assert.equal(noneHealth.telemetry, 'none');
  assert.equal(noneHealth.telemetry_last_sent_at, null);
  const refused = await post(none, '/telemetry/send');
  assert.equal(refused.status, 409);
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'telemetry_disabled');
  assert.deepEqual(reportsTo('/none'), []);
});

test('jobs are logged locally with solver or model, duration and error type, never content; reports carry none of it', async () => {
  const before = jobLines().length;
  const search = { type: 'pattern_search', dataset: ['a', PROBLEM_SECRET, 'c', 'd'].join('\n'), target: { pattern: PROBLEM_SECRET, min_confidence: 0.5 }, search_space_size: 4 };
  const solved = await post(basic, '/api/solve', { solver: 'grover', problem: search, seed: 1 });
  assert.equal(solved.status, 200, await solved.clone().text());
  const refused = await post(basic, '/api/solve', { solver: 'grover', substrate: 'vendor-eagle', problem: search });
  assert.equal(refused.status, 503);
  const chat = await post(basic, '/v1/chat/completions', { model: 'tiny', max_tokens: 3, messages: [{ role: 'user', content: `Say ${PROMPT_SECRET}` }] });
  assert.equal(chat.status, 200, await chat.clone().text());
  const missing = await post(basic, '/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: PROMPT_SECRET }] });
  assert.equal(missing.status, 404);
  // Not jobs either: requests the loopback guard refuses (a page on another site, a rebound name).
  for (const headers of [{ origin: 'http://evil.example' }, { host: 'evil.example' }] as Record<string, string>[]) {
    assert.equal(await guardedPost(basic, '/v1/chat/completions', headers, { model: 'tiny', messages: [{ role: 'user', content: 'x' }] }), 403);
  }
  const embedded = await post(basic, '/v1/embeddings', { model: 'svc-hashed-embed-v2', input: PROMPT_SECRET });
  assert.equal(embedded.status, 200);
  // Not jobs: health, model lists, the telemetry view.
  await fetch(`${basic.url}/health`);
  await fetch(`${basic.url}/v1/models`);

  await until('five job lines', () => jobLines().length >= before + 5);
  const lines = jobLines().slice(before);
  assert.equal(lines.length, 5);
  const pick = ({ kind, name, outcome, error_type }: Record<string, unknown>) => ({ kind, name, outcome, error_type });
  assert.deepEqual(lines.map(pick), [
    { kind: 'solve', name: 'grover', outcome: 'completed', error_type: null },
    { kind: 'solve', name: 'grover', outcome: 'failed', error_type: 'substrate_unavailable' },
    { kind: 'chat', name: 'tiny', outcome: 'completed', error_type: null },
    { kind: 'chat', name: null, outcome: 'failed', error_type: 'model_not_found' },
    { kind: 'embeddings', name: 'svc-hashed-embed-v2', outcome: 'completed', error_type: null },
  ]);
  for (const line of lines) assert.ok(Number.isInteger(line.duration_ms) && (line.duration_ms as number) >= 0);
  const logText = readFileSync(join(dataDir, 'logs', 'jobs.ndjson'), 'utf8');
  assert.ok(!logText.includes(PROBLEM_SECRET) && !logText.includes(PROMPT_SECRET));

  // The count reported is the jobs of the last 24 hours: every line of this daemon's log.
  const sent = await post(basic, '/telemetry/send');
  assert.equal(sent.status, 200);
  const report = (await sent.json()) as { payload: { daily_job_count: number } };
  assert.equal(report.payload.daily_job_count, jobLines().length);
  await until('the report with the new count', () => reportsTo('/basic').some((c) => (JSON.parse(c.body) as { daily_job_count: number }).daily_job_count === jobLines().length));
  for (const c of captured) {
    assertReport(c);
    const everything = `${c.method} ${c.url} ${JSON.stringify(c.headers)} ${c.body}`;
    assert.ok(!everything.includes(PROBLEM_SECRET) && !everything.includes(PROMPT_SECRET) && !everything.includes('grover') && !everything.includes('tiny'), everything);
  }
});

test('svc telemetry send --dry-run prints exactly the body; svc telemetry send posts that body', async () => {
  const dry = await runCliToEnd(['telemetry', 'send', '--dry-run', '--url', basic.url]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stderr, /nothing was sent/);
  const dryBody = JSON.parse(dry.stdout) as Record<string, number>;
  const reportsBefore = reportsTo('/basic').length;
  const send = await runCliToEnd(['telemetry', 'send', '--url', basic.url]);
  assert.equal(send.code, 0, send.stderr);
  assert.match(send.stderr, new RegExp(`sent to ${captureUrl}/basic at `));
  const sentLine = send.stdout.trim();
  // What the command printed is, byte for byte, a body the endpoint received.
  await until('the manual report', () => reportsTo('/basic').slice(reportsBefore).some((c) => c.body === sentLine));
  const sentBody = JSON.parse(sentLine) as Record<string, number>;
  // The dry run showed the same fields and count (no job ran between); only the uptime moves on.
  assert.deepEqual(Object.keys(dryBody).sort(), Object.keys(sentBody).sort());
  assert.equal(dryBody.daily_job_count, sentBody.daily_job_count);
  assert.ok(sentBody.uptime_seconds! >= dryBody.uptime_seconds!);

  const noneDry = await runCliToEnd(['telemetry', 'send', '--dry-run', '--url', none.url]);
  assert.equal(noneDry.code, 0, noneDry.stderr);
  assert.deepEqual(Object.keys(JSON.parse(noneDry.stdout) as object).sort(), ['daily_job_count', 'uptime_seconds']);
  assert.match(noneDry.stderr, /telemetry is none/);
  const noneSend = await runCliToEnd(['telemetry', 'send', '--url', none.url]);
  assert.equal(noneSend.code, 1);
  assert.match(noneSend.stderr, /^svc telemetry send: Telemetry is none: nothing is sent/);
  assert.deepEqual(reportsTo('/none'), []);
});

test('retrieval_unavailable: a chat turn whose search fails answers without sources, and the job log records the class', async () => {
  assert.equal((await post(basic, '/api/spaces', { name: 'notes' })).status, 201);
  assert.equal((await post(basic, '/api/spaces/notes/documents', { text: `The ${PROBLEM_SECRET} lives in the garden shed.` })).status, 201);
  // Break the store under the running daemon: search needs the word statistics table.
  const db = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'));
  db.exec('DROP TABLE space_words');
  db.close();
  const before = jobLines().length;
  const chat = await post(basic, '/v1/chat/completions', { model: 'tiny', max_tokens: 2, spaces: ['notes'], messages: [{ role: 'user', content: `Where does the ${PROMPT_SECRET} live?` }] });
  assert.equal(chat.status, 200, await chat.clone().text());
  const retrieval = ((await chat.json()) as { svc_retrieval: { status: string; citations: unknown[]; error: { code: string } } }).svc_retrieval;
  assert.equal(retrieval.status, 'retrieval_unavailable');
  assert.deepEqual(retrieval.citations, []);
  assert.equal(retrieval.error.code, 'search_failed');

  await until('the chat job line', () => jobLines().length > before);
  const lines = jobLines();
  const ingest = lines.find((l) => l.kind === 'ingest');
  assert.deepEqual(ingest && { name: ingest.name, outcome: ingest.outcome, error_type: ingest.error_type }, { name: 'svc-hashed-embed-v2', outcome: 'completed', error_type: null });
  const last = lines.at(-1)!;
  assert.deepEqual({ kind: last.kind, name: last.name, outcome: last.outcome, error_type: last.error_type }, { kind: 'chat', name: 'tiny', outcome: 'completed', error_type: 'retrieval_unavailable' });
  assert.ok(basic.logs.some((l) => l.failure_class === 'retrieval_unavailable'));
  const logText = readFileSync(join(dataDir, 'logs', 'jobs.ndjson'), 'utf8');
  assert.ok(!logText.includes(PROBLEM_SECRET) && !logText.includes(PROMPT_SECRET));
});
