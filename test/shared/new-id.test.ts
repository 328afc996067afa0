import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeTime, newId, newTimeOrderedId } from '../../src/shared/new-id.ts';
import { EVIDENCE_ID } from '../../src/hosted/chat/svc-route-evidence.ts';

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

test('time-ordered identifiers: time first (fixed width), then the random part; they sort by creation time in any collation', () => {
  assert.equal(encodeTime(0), '000000000');
  assert.equal(encodeTime(35), '00000000z');
  assert.equal(encodeTime(36), '000000010');
  assert.equal(encodeTime(36 ** 9 - 1), 'zzzzzzzzz');
  assert.throws(() => encodeTime(36 ** 9), RangeError);
  assert.throws(() => encodeTime(-1), RangeError);
  assert.throws(() => encodeTime(1.5), RangeError);

  const t0 = Date.UTC(2026, 10, 27);
  const id = newTimeOrderedId('ev_', 16, t0);
  assert.match(id, /^ev_[0-9a-z]{9}[A-Za-z0-9]{16}$/);
  // The evidence route's own pattern accepts it.
  assert.match(id, EVIDENCE_ID);
  assert.equal(id.slice(3, 12), encodeTime(t0));

  // Across milliseconds they sort by time, compared as bytes and as a locale would.
  const ids = [t0 + 86_400_000 * 400, t0, t0 + 1, t0 + 36, t0 + 1_000_000].map((ms) => newTimeOrderedId('ev_', 16, ms));
  const byTime = [1, 2, 3, 4, 0].map((k) => ids[k]);
  assert.deepEqual([...ids].sort(), byTime);
  assert.deepEqual([...ids].sort((a, b) => a.slice(0, 12).localeCompare(b.slice(0, 12), 'en')), byTime);

  // Many in the same millisecond: all distinct (the random part).
  const same = new Set(Array.from({ length: 10_000 }, () => newTimeOrderedId('ev_', 16, t0)));
  assert.equal(same.size, 10_000);
});
