import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readCommit } from '../../src/hosted/build-info.ts';

test('the commit comes from git where the install is a checkout, else SVC_COMMIT, else null', () => {
  const here = readCommit({});
  assert.match(String(here), /^[0-9a-f]{40}$/, 'this worktree is a git checkout');
  const bare = mkdtempSync(join(tmpdir(), 'svc-build-'));
  assert.equal(readCommit({}, bare), null);
  assert.equal(readCommit({ SVC_COMMIT: 'ABCDEF1234567' }, bare), 'abcdef1234567');
  assert.equal(readCommit({ SVC_COMMIT: 'not a commit; rm -rf' }, bare), null);
});
