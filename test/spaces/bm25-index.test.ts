import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { Bm25Index, type Bm25Hit } from '../../src/spaces/bm25-index.ts';
import { bm25Expression, queryTerms } from '../../src/spaces/bm25-query.ts';
import { seededRandom, type SeededRandom } from '../../src/spaces/eval/seeded-random.ts';
import { reduceMemoryNow } from '../../src/shared/memory-reducing-gc.ts';

/** The space store's FTS5 table (space-store.ts), the ranking the index must reproduce. */
function ftsTable(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5(text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')");
  return db;
}

/** Every match, best first (the ones past k tell whether the k-th is tied). */
function fts5Ranking(db: DatabaseSync, query: string): Bm25Hit[] {
  const expression = bm25Expression(queryTerms(query));
  if (expression === null) return [];
  return db.prepare('SELECT rowid AS id, -rank AS score FROM t WHERE t MATCH ? ORDER BY rank').all(expression) as unknown as Bm25Hit[];
}

/** A fresh FTS5 table of the live chunks: a contentless_delete table keeps deleted rows in its row count and token total, so its own idf drifts after deletes (the index counts live chunks only). */
function liveFts(live: ReadonlyMap<number, string>): DatabaseSync {
  const db = ftsTable();
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  for (const [id, text] of live) insert.run(id, text);
  return db;
}

// Stems with suffixes Porter folds together (and some it does not), accents, digits, mixed case:
// the corpus exercises the stemming and folding the index must share with FTS5.
const STEMS = ['connect', 'relat', 'general', 'happi', 'run', 'pump', 'valv', 'press', 'motor', 'caf\u00e9', 'na\u00efve', 'kz25', 'oper', 'measur', 'condition', 'electr', 'hope', 'sing', 'adjust', 'formal'];
const SUFFIXES = ['', 's', 'es', 'ed', 'ing', 'ion', 'ions', 'ational', 'ization', 'ness', 'ly', 'ful', 'ment', 'er', 'e', 'ies', 'ity', 'ative', 'ible', 'ously'];
const FILLER = ['the', 'a', 'of', 'and', 'to', 'in', 'is', 'for', 'on', 'with'];

function randomWord(random: SeededRandom): string {
  // Zipf-like: a few words are common, most rare (what makes some idf clamp and some terms long).
  if (random.chance(0.35)) return random.pick(FILLER);
  const word = random.pick(STEMS.slice(0, random.int(1, STEMS.length))) + random.pick(SUFFIXES.slice(0, random.int(1, SUFFIXES.length)));
  return random.chance(0.1) ? word.toUpperCase() : word;
}

function randomText(random: SeededRandom, words: number): string {
  return Array.from({ length: words }, () => randomWord(random)).join(random.pick([' ', ', ', '. ', ' - ']));
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** Same top k as FTS5's full `ranking`: the same scores in order (to rounding), and the same ids wherever a score is not tied. */
function assertSameRanking(actual: Bm25Hit[], ranking: Bm25Hit[], k: number, context: string): void {
  const expected = ranking.slice(0, k);
  assert.equal(actual.length, expected.length, `${context}: hit count`);
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i]!;
    assert.ok(close(actual[i]!.score, want.score), `${context}: score ${i} ${actual[i]!.score} vs ${want.score}`);
    const tied = ranking.some((other, j) => j !== i && close(other.score, want.score));
    if (!tied) assert.equal(actual[i]!.id, want.id, `${context}: id at ${i}`);
  }
}

test('bm25 index: ranks a random corpus as FTS5 bm25() does, scores included', () => {
  const random = seededRandom('bm25-index');
  const db = ftsTable();
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  const index = new Bm25Index();
  const docs: { id: number; text: string }[] = [];
  for (let id = 1; id <= 600; id++) {
    const text = randomText(random, random.int(1, 80));
    insert.run(id, text);
    docs.push({ id, text });
  }
  index.upsert(docs);
  assert.equal(index.size, 600);
  for (let q = 0; q < 300; q++) {
    const query = randomText(random, random.int(1, 6));
    const ranking = fts5Ranking(db, query);
    for (const k of [1, 10, 50]) assertSameRanking(index.search(queryTerms(query), k), ranking, k, `query ${JSON.stringify(query)} k ${k}`);
  }
  assert.deepEqual(index.search(queryTerms('zzzunknown'), 10), []);
  assert.deepEqual(index.search([], 10), []);
});

test('bm25 index: after random adds, replaces and deletes it matches FTS5 and never returns a removed chunk', () => {
  const random = seededRandom('bm25-index-updates');
  const db = ftsTable();
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  const remove = db.prepare('DELETE FROM t WHERE rowid = ?');
  const index = new Bm25Index();
  const live = new Map<number, string>();
  const removed = new Set<number>();
  const removedText = new Map<number, string>();
  let nextId = 1;
  for (let step = 0; step < 60; step++) {
    // A document's worth of chunks in, as the library hands them over after a commit.
    const added = Array.from({ length: random.int(1, 12) }, () => ({ id: nextId++, text: randomText(random, random.int(1, 60)) }));
    for (const { id, text } of added) {
      insert.run(id, text);
      live.set(id, text);
    }
    index.upsert(added);
    // Then some chunks out (a replaced or deleted document).
    const gone = random.shuffle([...live.keys()]).slice(0, random.int(0, 8));
    for (const id of gone) {
      removedText.set(id, live.get(id)!);
      remove.run(id);
      live.delete(id);
      removed.add(id);
    }
    index.remove(gone);
    assert.equal(index.size, live.size);
    const fresh = liveFts(live);
    for (let q = 0; q < 5; q++) {
      const query = randomText(random, random.int(1, 5));
      const hits = index.search(queryTerms(query), 30);
      assertSameRanking(hits, fts5Ranking(fresh, query), 30, `step ${step} query ${JSON.stringify(query)}`);
      // The store's own table matches the same chunks (only its scores drift).
      assert.deepEqual(new Set(fts5Ranking(db, query).map((hit) => hit.id)), new Set(fts5Ranking(fresh, query).map((hit) => hit.id)));
      for (const hit of hits) assert.ok(!removed.has(hit.id), `removed chunk ${hit.id} returned`);
    }
    // A removed chunk's own words find live chunks only.
    for (const id of gone) assert.ok(index.search(queryTerms(removedText.get(id)!), 1000).every((hit) => live.has(hit.id)), `after removing ${id}`);
    fresh.close();
  }
  // Removing what is not there, and re-adding an id with new text, are handled.
  index.remove([...removed].slice(0, 3));
  const [someId] = live.keys();
  index.upsert([{ id: someId!, text: 'replacement words only here' }]);
  assert.deepEqual(index.search(queryTerms('replacement'), 5).map((hit) => hit.id), [someId]);
});

test('bm25 index: a filter drops ids before they count, so k hits still come back', () => {
  const index = new Bm25Index();
  index.upsert(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, text: `pump ${i % 2 === 0 ? 'even' : 'odd'} model ${i}` })));
  const hits = index.search(['pump'], 10, (id) => id % 2 === 0);
  assert.equal(hits.length, 10);
  assert.ok(hits.every((hit) => hit.id % 2 === 0));
});

test('bm25 index: after most chunks are removed (their term lists compacted away) it ranks as an index of the rest, and removes still work', () => {
  const random = seededRandom('bm25-index-compaction');
  const index = new Bm25Index();
  const live = new Map<number, string>();
  for (let id = 1; id <= 1500; id++) live.set(id, randomText(random, random.int(20, 60)));
  index.upsert([...live].map(([id, text]) => ({ id, text })));
  // Two removals: the first frees over half of the term lists (compaction), the second reads the moved ones.
  for (const count of [1000, 200]) {
    const gone = random.shuffle([...live.keys()]).slice(0, count);
    index.remove(gone);
    for (const id of gone) live.delete(id);
  }
  const fresh = new Bm25Index();
  fresh.upsert([...live].map(([id, text]) => ({ id, text })));
  assert.equal(index.size, live.size);
  for (let q = 0; q < 20; q++) {
    const words = queryTerms(randomText(random, random.int(1, 4)));
    assertSameRanking(index.search(words, 30), fresh.search(words, 10_000), 30, `query ${q}`);
  }
});

test('bm25 index: the words it keeps hold no memory of the chunks they came from', () => {
  // A word of 13 or more characters cut from a text is, in V8, a view of that text: kept as a
  // key, it kept the whole chunk. Each 1 MiB chunk here brings one new long word (an id).
  const chunks = 32;
  const index = new Bm25Index();
  assert.ok(reduceMemoryNow(), 'this runtime gives no gc()');
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < chunks; i++) index.upsert([{ id: i + 1, text: `${'request served '.repeat(1 << 16)}ident${String(i).padStart(12, '0')}` }]);
  reduceMemoryNow();
  const held = process.memoryUsage().heapUsed - before;
  assert.ok(held < 4 * 2 ** 20, `the index holds ${(held / 2 ** 20).toFixed(1)} MiB after ${chunks} MiB of text`);
  assert.deepEqual(index.search(['ident000000000007'], 5, undefined).map((hit) => hit.id), [8]);
});
