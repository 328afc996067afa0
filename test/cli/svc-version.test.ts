import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { svcCommit } from '../../src/shared/svc-commit.ts';
import { runCliToEnd } from '../helpers/daemon-process.ts';

const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };

test('svc --version prints the version and the commit it runs from', async () => {
  const run = await runCliToEnd(['--version']);
  assert.equal(run.code, 0, run.stderr);
  const commit = svcCommit();
  assert.equal(run.stdout, `svc ${version} (${commit === undefined ? 'commit unknown' : commit.slice(0, 12)})\n`);
  // From a git checkout (or worktree), it is the commit git itself names HEAD.
  let head: string | undefined;
  try {
    head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: import.meta.dirname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    head = undefined; // no git here: the reader's own tests (test/shared/svc-commit.test.ts) cover it
  }
  if (head !== undefined) assert.equal(commit, head);
});
