/**
 * The kernel's block exponent follows the L2 size: half of L2 holds the block's re + im.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLowBits, fromL2, l2CacheBytes } from '../../../src/quantum/simulator/low-bits.ts';

test('lowBits from the L2 size: 512 KiB → 14, 1 MiB → 15, 2 MiB → 16, unknown → 14, clamped to 12..18', () => {
  assert.equal(fromL2(512 * 1024), 14);
  assert.equal(fromL2(1024 ** 2), 15);
  assert.equal(fromL2(2 * 1024 ** 2), 16);
  assert.equal(fromL2(1.25 * 1024 ** 2), 15);
  assert.equal(fromL2(null), 14);
  assert.equal(fromL2(64 * 1024), 12);
  assert.equal(fromL2(1024 ** 3), 18);
  const bits = defaultLowBits();
  assert.ok(Number.isInteger(bits) && bits >= 12 && bits <= 18);
});

test('l2CacheBytes reads the level-2 data or unified cache from sysfs, and null where there is none', () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-cache-'));
  try {
    const add = (name: string, level: string, type: string, size: string): void => {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, 'level'), `${level}\n`);
      writeFileSync(join(root, name, 'type'), `${type}\n`);
      writeFileSync(join(root, name, 'size'), `${size}\n`);
    };
    add('index0', '1', 'Data', '48K');
    add('index1', '1', 'Instruction', '32K');
    assert.equal(l2CacheBytes(root), null);
    add('index2', '2', 'Unified', '2048K');
    assert.equal(l2CacheBytes(root), 2 * 1024 ** 2);
    assert.equal(l2CacheBytes(join(root, 'missing')), null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
