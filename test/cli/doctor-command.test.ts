import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkNode } from '../../src/cli/doctor-checks.ts';
import { runCliToEnd, startDaemon, tinyModelPath } from '../helpers/daemon-process.ts';

const POSIX = process.platform !== 'win32';

/** A server holding a loopback port (as another program would). */
async function holdPort(): Promise<Server & { port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

/** A loopback port nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = await holdPort();
  await new Promise((resolve) => server.close(resolve));
  return server.port;
}

const line = (stdout: string, name: string): string => stdout.split('\n').find((l) => new RegExp(`^\\w+\\s+${name}\\s`).test(l)) ?? `(no ${name} line in:\n${stdout})`;

test('svc doctor: node, llama.cpp, models, a free and a held port, a private data dir; exit 1 for the held port', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  chmodSync(dataDir, 0o700);
  mkdirSync(join(dataDir, 'models'));
  copyFileSync(tinyModelPath(), join(dataDir, 'models', 'tiny.gguf'));
  const held = await holdPort();
  t.after(() => held.close());
  const free = await closedPort();
  const run = await runCliToEnd(['doctor', '--data-dir', dataDir, '--port', String(free), '--port', String(held.port)]);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(run.stdout.split('\n')[0]!, /^svc \d+\.\d+\.\d+ \(/);
  assert.match(line(run.stdout, 'node'), new RegExp(`^ok\\s+node\\s+v${process.versions.node} at `));
  assert.match(line(run.stdout, 'llama\\.cpp'), /^ok\s+llama\.cpp\s+CPU \(--gpu cpu\)/);
  assert.match(line(run.stdout, 'models'), /^ok\s+models\s+1 found/);
  assert.ok(run.stdout.includes(`svc: 1 in ${join(dataDir, 'models')}`), run.stdout);
  assert.match(line(run.stdout, `port ${free}`), /^ok\s+port \d+\s+free on 127\.0\.0\.1/);
  assert.match(line(run.stdout, `port ${held.port}`), /^fail\s+port \d+\s+held by another program/);
  assert.match(line(run.stdout, 'data dir'), POSIX ? /^ok\s+data dir\s+.*\(mode 0700\)/ : /^ok\s+data dir/);
  assert.doesNotMatch(run.stdout, /postgresql|redis/);
});

test('svc doctor: nothing fails on a machine with no models and a data dir still to be made (exit 0); a shared data dir is a warning', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  const port = String(await closedPort());
  const fresh = await runCliToEnd(['doctor', '--port', port], { SVC_DATA_DIR: join(parent, 'not-yet') });
  assert.equal(fresh.code, 0, fresh.stdout + fresh.stderr);
  assert.match(line(fresh.stdout, 'models'), /^warn\s+models\s+none found/);
  assert.match(line(fresh.stdout, 'data dir'), /^ok\s+data dir\s+.*does not exist yet/);
  if (!POSIX) return;
  chmodSync(parent, 0o755);
  const shared = await runCliToEnd(['doctor', '--port', port, '--data-dir', parent]);
  assert.equal(shared.code, 0, shared.stdout + shared.stderr);
  assert.match(line(shared.stdout, 'data dir'), /^warn\s+data dir\s+.*mode 0755, not 0700/);
});

test('svc doctor: a port an svc daemon holds is fine', async (t) => {
  const daemon = await startDaemon({ withModel: false });
  t.after(() => daemon.stop());
  const run = await runCliToEnd(['doctor', '--data-dir', daemon.dataDir, '--port', String(daemon.port), '--json']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const report = JSON.parse(run.stdout) as { ok: boolean; checks: { name: string; mark: string; detail: string }[] };
  assert.equal(report.ok, true);
  const port = report.checks.find((c) => c.name === `port ${daemon.port}`);
  assert.equal(port?.mark, 'ok');
  assert.match(port.detail, /held by a running svc daemon/);
});

test('svc doctor: a configured PostgreSQL or Redis that does not answer is a fail line, without its password', async () => {
  const port = await closedPort();
  const run = await runCliToEnd(['doctor', '--data-dir', mkdtempSync(join(tmpdir(), 'svc-doctor-')), '--port', '0', '--timeout', '2',
    '--database-url', `postgres://svc:hunter2@127.0.0.1:${port}/svc`], { SVC_REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'postgresql'), /^fail\s+postgresql\s+postgres:\/\/svc:\*\*\*@127\.0\.0\.1:\d+\/svc unreachable/);
  assert.match(line(run.stdout, 'redis'), /^fail\s+redis\s+redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ unreachable/);
  assert.doesNotMatch(run.stdout, /hunter2/);
});

test('checkNode: a Node older than engines.node fails and says which node runs svc', () => {
  assert.equal(checkNode('>=24.0.0', '24.1.0', '/x/node').mark, 'ok');
  const old = checkNode('>=24.0.0', '20.11.1', '/usr/bin/node');
  assert.equal(old.mark, 'fail');
  assert.match(old.detail, /v20\.11\.1 at \/usr\/bin\/node, but svc needs Node >=24\.0\.0/);
});
