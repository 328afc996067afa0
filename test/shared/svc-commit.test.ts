import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { svcCommit, versionLine } from '../../src/shared/svc-commit.ts';

const A = 'a'.repeat(40);
const B = '0123456789abcdef0123456789abcdef01234567';

/** A checkout at a temp root: `.git/` with the given files (paths relative to it). */
function checkout(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-commit-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, '.git', path, '..'), { recursive: true });
    writeFileSync(join(root, '.git', path), text);
  }
  return root;
}

test('svcCommit: a branch through its loose ref, through packed-refs, and a detached HEAD', () => {
  assert.equal(svcCommit(checkout({ HEAD: 'ref: refs/heads/main\n', 'refs/heads/main': `${A}\n` }), undefined), A);
  assert.equal(svcCommit(checkout({ HEAD: 'ref: refs/heads/main\n', 'packed-refs': `# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/other\n${B} refs/heads/main\n` }), undefined), B);
  assert.equal(svcCommit(checkout({ HEAD: `${B.toUpperCase()}\n` }), undefined), B);
});

test('svcCommit: a worktree (.git is a file naming its git dir; refs in the common dir)', () => {
  const main = checkout({ 'refs/heads/feature': `${B}\n`, 'worktrees/wt/HEAD': 'ref: refs/heads/feature\n', 'worktrees/wt/commondir': '../..\n' });
  const worktree = mkdtempSync(join(tmpdir(), 'svc-commit-wt-'));
  writeFileSync(join(worktree, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'wt')}\n`);
  assert.equal(svcCommit(worktree, undefined), B);
});

test('svcCommit: no checkout, or a HEAD it cannot resolve, falls back to the packaged commit or none', () => {
  const bare = mkdtempSync(join(tmpdir(), 'svc-commit-'));
  assert.equal(svcCommit(bare, A), A);
  assert.equal(svcCommit(bare, undefined), undefined);
  assert.equal(svcCommit(checkout({ HEAD: 'ref: refs/heads/missing\n' }), undefined), undefined);
  assert.equal(svcCommit(checkout({ HEAD: 'ref: refs/../../etc/passwd\n' }), undefined), undefined);
});

test('versionLine: the short commit, or says it is unknown', () => {
  assert.equal(versionLine('1.2.3', B), 'svc 1.2.3 (0123456789ab)');
  assert.equal(versionLine('1.2.3', undefined), 'svc 1.2.3 (commit unknown)');
});
