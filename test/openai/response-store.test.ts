/**
 * The responses store (src/openai/response-store.ts): what it keeps and lists, the chain a
 * continuation reads, retention and the size cap (oldest first), private files, and the
 * schema-version rule.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it, type TestContext } from 'node:test';
import { ResponseStore, type StoredItem } from '../../src/openai/response-store.ts';
import { chainItems, toStoredItems } from '../../src/openai/stored-conversation.ts';
import { StoreVersionError } from '../../src/shared/store-version.ts';

const DAY = 24 * 60 * 60 * 1000;

function tempPath(t: TestContext): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-responses-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return ResponseStore.pathIn(join(root, 'data'));
}

function open(t: TestContext, path: string, limits: { retentionMs?: number; maxBytes?: number; now?: () => number } = {}): ResponseStore {
  const store = ResponseStore.open(path, { retentionMs: limits.retentionMs ?? 30 * DAY, maxBytes: limits.maxBytes ?? 1024 ** 3, ...(limits.now ? { now: limits.now } : {}) });
  t.after(() => store.close());
  return store;
}

const response = (id: string, text: string, previous: string | null = null) => ({
  id, object: 'response', previous_response_id: previous, store: true,
  output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }],
});

const items = (...texts: string[]): StoredItem[] => toStoredItems(texts.map((text) => ({ type: 'message' as const, role: 'user' as const, content: text })));

describe('ResponseStore', () => {
  it('keeps a response with its input items; get, delete, and a private file in a private folder', (t) => {
    const path = tempPath(t);
    const store = open(t, path);
    assert.equal(store.save({ id: 'resp_a', previousId: null, response: response('resp_a', 'hi'), inputItems: items('hello') }), true);
    assert.deepEqual(store.get('resp_a'), response('resp_a', 'hi'));
    assert.ok(store.bytes > 0);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(path, '..')).mode & 0o777, 0o700);
    assert.equal(store.delete('resp_a'), true);
    assert.equal(store.get('resp_a'), undefined);
    assert.equal(store.delete('resp_a'), false);
    assert.equal(store.bytes, 0);
    assert.equal(store.get('__proto__'), undefined);
  });

  it('lists input items as OpenAI pages them: order, after, limit, has_more', (t) => {
    const store = open(t, tempPath(t));
    const sent = items('one', 'two', 'three', 'four', 'five');
    store.save({ id: 'resp_a', previousId: null, response: response('resp_a', 'ok'), inputItems: sent });
    const ids = sent.map((item) => item.id);
    const desc = store.inputItems('resp_a', { order: 'desc', limit: 2 });
    assert.ok(desc !== undefined && desc !== 'unknown_after');
    assert.deepEqual(desc.data.map((item) => item.id), [ids[4], ids[3]]);
    assert.deepEqual([desc.object, desc.first_id, desc.last_id, desc.has_more], ['list', ids[4], ids[3], true]);
    const next = store.inputItems('resp_a', { order: 'desc', limit: 2, after: desc.last_id! });
    assert.ok(next !== undefined && next !== 'unknown_after');
    assert.deepEqual(next.data.map((item) => item.id), [ids[2], ids[1]]);
    const asc = store.inputItems('resp_a', { order: 'asc', limit: 20, after: ids[2] });
    assert.ok(asc !== undefined && asc !== 'unknown_after');
    assert.deepEqual(asc.data.map((item) => item.id), [ids[3], ids[4]]);
    assert.equal(asc.has_more, false);
    assert.deepEqual(asc.data[0]!.content, [{ type: 'input_text', text: 'four' }]);
    assert.equal(store.inputItems('resp_a', { order: 'asc', limit: 20, after: 'msg_unknown' }), 'unknown_after');
    assert.equal(store.inputItems('resp_missing', { order: 'asc', limit: 20 }), undefined);
  });

  it('reads a chain oldest first, and says which link is gone when one is', (t) => {
    const store = open(t, tempPath(t));
    store.save({ id: 'resp_1', previousId: null, response: response('resp_1', 'first reply'), inputItems: items('first') });
    store.save({ id: 'resp_2', previousId: 'resp_1', response: response('resp_2', 'second reply', 'resp_1'), inputItems: items('second') });
    store.save({ id: 'resp_3', previousId: 'resp_2', response: response('resp_3', 'third reply', 'resp_2'), inputItems: items('third') });
    const chain = store.chain('resp_3', 1 << 20);
    assert.ok(chain.found);
    assert.deepEqual(chain.links.map((link) => link.id), ['resp_1', 'resp_2', 'resp_3']);
    const conversation = chainItems(chain.links).map((item) => item.type === 'message' ? [item.role, item.content] : item.type);
    assert.deepEqual(conversation, [
      ['user', [{ type: 'input_text', text: 'first' }]], ['assistant', [{ type: 'output_text', text: 'first reply' }]],
      ['user', [{ type: 'input_text', text: 'second' }]], ['assistant', [{ type: 'output_text', text: 'second reply' }]],
      ['user', [{ type: 'input_text', text: 'third' }]], ['assistant', [{ type: 'output_text', text: 'third reply' }]],
    ]);
    assert.deepEqual(store.chain('resp_3', 10), { found: false, tooLarge: true });
    store.delete('resp_1');
    assert.deepEqual(store.chain('resp_3', 1 << 20), { found: false, missing: 'resp_1' });
    assert.deepEqual(store.chain('resp_9', 1 << 20), { found: false, missing: 'resp_9' });
  });

  it('deletes what passed the retention: on save, and at open', (t) => {
    const path = tempPath(t);
    let now = 1_000 * DAY;
    const store = open(t, path, { retentionMs: 30 * DAY, now: () => now });
    store.save({ id: 'resp_old', previousId: null, response: response('resp_old', 'x'), inputItems: items('x') });
    now += 20 * DAY;
    store.save({ id: 'resp_new', previousId: null, response: response('resp_new', 'y'), inputItems: items('y') });
    now += 11 * DAY;
    store.sweep();
    assert.equal(store.get('resp_old'), undefined, 'past 30 days');
    assert.ok(store.get('resp_new') !== undefined);
    store.close();
    now += 20 * DAY;
    const reopened = open(t, path, { retentionMs: 30 * DAY, now: () => now });
    assert.equal(reopened.get('resp_new'), undefined, 'swept at open');
    assert.equal(reopened.bytes, 0);
  });

  it('past the size cap deletes the oldest first until the rest fit; a response larger than the cap is not kept', (t) => {
    const path = tempPath(t);
    let now = 0;
    const big = 'z'.repeat(1000);
    const store = open(t, path, { maxBytes: 5000, now: () => ++now });
    for (const id of ['resp_1', 'resp_2', 'resp_3']) store.save({ id, previousId: null, response: response(id, big), inputItems: items('q') });
    assert.ok(store.get('resp_1') !== undefined && store.bytes <= 5000);
    store.save({ id: 'resp_4', previousId: null, response: response('resp_4', big), inputItems: items('q') });
    assert.equal(store.get('resp_1'), undefined, 'the oldest went first');
    assert.ok(store.get('resp_2') !== undefined && store.get('resp_4') !== undefined);
    assert.ok(store.bytes <= 5000);
    assert.equal(store.save({ id: 'resp_huge', previousId: null, response: response('resp_huge', 'z'.repeat(5000)), inputItems: [] }), false);
    assert.equal(store.get('resp_huge'), undefined);
    const before = store.bytes;
    store.close();
    assert.equal(open(t, path, { maxBytes: 5000, now: () => now }).bytes, before, 'the total is read back at open');
  });

  it('records its schema version and refuses a file a newer svc wrote, leaving it as it was', (t) => {
    const path = tempPath(t);
    open(t, path).close();
    const db = new DatabaseSync(path);
    assert.equal((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 1);
    db.exec('PRAGMA user_version = 2');
    db.close();
    assert.throws(() => open(t, path), (error: unknown) => error instanceof StoreVersionError && /responses store .* has schema version 2, newer than this svc/.test(error.message));
  });
});
