import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/shared/new-id.ts';

test('identifiers: prefix, length, URL-safe alphabet, all distinct across many pool refills', () => {
  const seen = new Set<string>();
  // 20,000 × 24 bytes is over a hundred 4 KiB batches; odd lengths make the batches end mid-identifier
  for (let k = 0; k < 20_000; k++) {
    const length = k % 7 === 0 ? 13 : 24;
    const id = newId('ev_', length);
    assert.match(id, new RegExp(`^ev_[A-Za-z0-9]{${length}}$`));
    assert.ok(!seen.has(id), `duplicate ${id}`);
    seen.add(id);
  }
});

test('identifier characters are spread over the whole alphabet (no byte reused as a constant)', () => {
  const counts = new Map<string, number>();
  for (let k = 0; k < 2_000; k++) for (const c of newId('', 24)) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  // 48,000 characters over 62 symbols: about 774 each; no symbol anywhere near zero or double
  for (const [c, n] of counts) assert.ok(n > 500 && n < 1100, `${c}: ${n}`);
});

test('lengths outside 1..4096 are refused', () => {
  assert.throws(() => newId('x', 0), RangeError);
  assert.throws(() => newId('x', 4097), RangeError);
  assert.equal(newId('x', 4096).length, 4097);
});
