/**
 * `svc serve` under umask 000 (anything it does not set itself would be readable and writable by
 * every local user): after a space, an uploaded document, a chat (the job log) and a restart on
 * the same data dir, every folder it made is 0700 and every file 0600, the SQLite WAL and shared
 * memory included; a data dir an older svc left 0755/0644 is made private at start.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startDaemon, tinyModelPath, type DaemonProcess } from '../helpers/daemon-process.ts';
import { loadTransportIdentity } from '../../src/transport/transport-identity.ts';
import { entriesNotPrivate, fileCount, withUmask } from '../helpers/private-modes.ts';

/** The CLI as its own process, under umask 000 (exec keeps the pid the test signals). */
const UMASK_000 = ['sh', '-c', 'umask 000; exec "$0" "$@"'];

const root = mkdtempSync(join(tmpdir(), 'svc-private-data-'));
// A data dir the daemon makes itself (startDaemon's own is made 0700 by mkdtemp).
const dataDir = join(root, 'svc');
after(() => rmSync(root, { recursive: true, force: true }));

/** Started for one test and stopped after it, whatever the test's outcome. */
async function serve(t: { after: (fn: () => Promise<unknown>) => void }): Promise<DaemonProcess> {
  // The later --data-dir wins over startDaemon's own.
  const daemon = await startDaemon({ wrap: UMASK_000, args: ['--data-dir', dataDir] });
  t.after(() => daemon.stop());
  return daemon;
}

async function ok(daemon: DaemonProcess, method: string, path: string, body?: RequestInit['body'], headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(`${daemon.url}${path}`, { method, body, headers });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}

test('a space, an uploaded document and a chat leave only 0600 files in 0700 folders, WAL included', async (t) => {
  assert.ok(tinyModelPath());
  const daemon = await serve(t);
  await ok(daemon, 'POST', '/api/spaces', JSON.stringify({ name: 'private' }), { 'content-type': 'application/json' });
  const form = new FormData();
  form.append('file', new Blob(['# Notes\n\nThe meeting moved to Thursday at noon.\n'], { type: 'text/markdown' }), 'notes.md');
  await ok(daemon, 'POST', '/api/spaces/private/documents?wait=true', form);
  await ok(daemon, 'POST', '/v1/chat/completions', JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }), { 'content-type': 'application/json' });
  // The job log line is written after the answer: wait for the file rather than a fixed time.
  const logs = join(dataDir, 'logs');
  for (let i = 0; i < 200 && !(existsSync(logs) && fileCount(logs) > 0); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(fileCount(logs) >= 1, 'the job log is written');
  assert.ok(existsSync(join(dataDir, 'spaces', 'spaces.db-wal')), 'the spaces WAL is there while the daemon runs');
  assert.deepEqual(entriesNotPrivate(dataDir), []);
  assert.equal(await daemon.stop(), 0);
  assert.deepEqual(entriesNotPrivate(dataDir), []);
});

test('a data dir an older svc left readable by others is made private at the next start', async (t) => {
  // What earlier versions made: folders 0755, the spaces store 0644.
  for (const dir of [dataDir, join(dataDir, 'spaces'), join(dataDir, 'models')]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  chmodSync(join(dataDir, 'spaces', 'spaces.db'), 0o644);
  const daemon = await serve(t);
  assert.deepEqual(entriesNotPrivate(dataDir), []);
  // The store still holds what was written before.
  const spaces = (await ok(daemon, 'GET', '/api/spaces')) as { data: { name: string; document_count: number }[] };
  assert.deepEqual(spaces.data.map((s) => [s.name, s.document_count]), [['private', 1]]);
  assert.equal(await daemon.stop(), 0);
});


test('the transport identity (--pqc-transport) writes its key and certificate 0600 in a 0700 folder under umask 000', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-private-transport-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fresh = join(dir, 'svc');
  await withUmask(0o000, () => loadTransportIdentity({ dataDir: fresh, algorithm: 'ml-dsa-65', names: ['localhost', '127.0.0.1'] }));
  assert.equal(fileCount(join(fresh, 'transport')), 3, 'the key, the certificate and the version file');
  assert.deepEqual(entriesNotPrivate(fresh), []);
});
