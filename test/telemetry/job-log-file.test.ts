import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { JOB_LOG_FILE, JobLogFile } from '../../src/telemetry/job-log-file.ts';
import type { JobRecord } from '../../src/shared/job-log.ts';

/** The local job log: its lines, rotation by size, and a disk that refuses writes. */
const root = mkdtempSync(join(tmpdir(), 'svc-job-log-'));
after(() => rmSync(root, { recursive: true, force: true }));

const job = (over: Partial<JobRecord> = {}): JobRecord => ({ kind: 'solve', name: 'grover', durationMs: 12.4, outcome: 'completed', errorType: null, ...over });

test('one JSON line per job: time, kind, name, duration, outcome, error type, nothing else; the file is private', async () => {
  const dir = join(root, 'lines');
  const log = new JobLogFile({ dir, onWarning: (message) => assert.fail(message) });
  log.record(job());
  log.record(job({ kind: 'chat', name: 'tiny', outcome: 'completed', errorType: 'retrieval_unavailable' }));
  log.record(job({ name: null, outcome: 'failed', errorType: 'invalid_problem', durationMs: -1 }));
  await log.close();
  const lines = readFileSync(join(dir, JOB_LOG_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 3);
  for (const line of lines) {
    assert.deepEqual(Object.keys(line).sort(), ['duration_ms', 'error_type', 'kind', 'name', 'outcome', 'time']);
    assert.ok(!Number.isNaN(Date.parse(line.time as string)));
  }
  assert.deepEqual({ ...lines[0], time: 'x' }, { time: 'x', kind: 'solve', name: 'grover', duration_ms: 12, outcome: 'completed', error_type: null });
  assert.equal(lines[1]!.error_type, 'retrieval_unavailable');
  assert.deepEqual([lines[2]!.name, lines[2]!.outcome, lines[2]!.error_type, lines[2]!.duration_ms], [null, 'failed', 'invalid_problem', 0]);
  assert.equal(statSync(join(dir, JOB_LOG_FILE)).mode & 0o777, 0o600);
});

test('rotation by size keeps the newest lines in jobs.ndjson and at most N rotated files', async () => {
  const dir = join(root, 'rotation');
  const log = new JobLogFile({ dir, size: '1K', rotated: 2, onWarning: (message) => assert.fail(message) });
  // About 120 bytes a line: 60 lines are several kilobytes, so several rotations.
  for (let i = 0; i < 60; i++) log.record(job({ durationMs: i }));
  await log.close();
  assert.deepEqual(readdirSync(dir).sort(), [JOB_LOG_FILE, `${JOB_LOG_FILE}.1`, `${JOB_LOG_FILE}.2`]);
  for (const name of readdirSync(dir)) assert.ok(statSync(join(dir, name)).size <= 1024 + 200, `${name} is about the rotation size`);
  const durations = (name: string) => readFileSync(join(dir, name), 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { duration_ms: number }).duration_ms);
  // The newest file holds the last job; each rotated file holds older ones, in order.
  const all = [...durations(`${JOB_LOG_FILE}.2`), ...durations(`${JOB_LOG_FILE}.1`), ...durations(JOB_LOG_FILE)];
  assert.equal(all.at(-1), 59);
  assert.deepEqual(all, [...all].sort((a, b) => a - b));
  assert.ok(all.length < 60, 'the oldest lines were rotated away');
  // Every job was counted, whatever the rotation kept.
  assert.equal(log.dailyCount(), 60);
});

test('a log folder that cannot be written is one warning; jobs are still counted and nothing throws', async () => {
  // The folder's path is taken by a file: every open fails (ENOTDIR/EEXIST), as a full or read-only disk would.
  const blocked = join(root, 'blocked');
  writeFileSync(blocked, 'not a folder');
  const warnings: string[] = [];
  const log = new JobLogFile({ dir: join(blocked, 'logs'), onWarning: (message) => warnings.push(message) });
  for (let i = 0; i < 5; i++) {
    log.record(job());
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (let i = 0; i < 5; i++) log.record(job());
  await log.close();
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /job log: cannot write .*jobs are not logged until it works again/);
  assert.equal(log.dailyCount(), 10);
  assert.equal(existsSync(join(blocked, 'logs')), false);
});

test('the logs folder svc makes is private (0700), and a job log left readable is made private (0600) on open', async () => {
  const dir = join(root, 'private', 'logs');
  const log = new JobLogFile({ dir, onWarning: (message) => assert.fail(message) });
  log.record(job());
  await log.close();
  assert.equal(statSync(dir).mode & 0o777, 0o700);

  const existing = join(root, 'existing');
  mkdirSync(existing);
  writeFileSync(join(existing, JOB_LOG_FILE), '', { mode: 0o644 });
  chmodSync(join(existing, JOB_LOG_FILE), 0o644);
  const reopened = new JobLogFile({ dir: existing, onWarning: (message) => assert.fail(message) });
  reopened.record(job());
  await reopened.close();
  assert.equal(statSync(join(existing, JOB_LOG_FILE)).mode & 0o777, 0o600);
});

test('past 1 MB waiting for the disk, lines are dropped with one warning; every job is still counted', async () => {
  const dir = join(root, 'backlog');
  const warnings: string[] = [];
  const log = new JobLogFile({ dir, onWarning: (message) => warnings.push(message) });
  // Written without yielding, so nothing reaches the disk meanwhile: about 1.4 MB of lines.
  const jobs = 12_000;
  for (let i = 0; i < jobs; i++) log.record(job({ durationMs: i }));
  await log.close();
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /over 1 MB is waiting to be written .* jobs are not logged until it catches up/);
  const written = readFileSync(join(dir, JOB_LOG_FILE), 'utf8').trim().split('\n').length;
  assert.ok(written < jobs, `${written} of ${jobs} lines written`);
  assert.equal(log.dailyCount(), jobs);
});
