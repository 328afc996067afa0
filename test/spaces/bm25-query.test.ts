import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { bm25Expression, indexRowBudget, MAX_QUERY_TERMS, queryTerms, selectiveTerms } from '../../src/spaces/bm25-query.ts';

function ftsTable(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5(text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')");
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  insert.run(1, 'near the river and the bridge');
  insert.run(2, 'Café opening hours: not on mondays');
  insert.run(3, 'text column OR rank');
  return db;
}

function match(db: DatabaseSync, query: string): number[] {
  const expression = bm25Expression(queryTerms(query));
  if (expression === null) return [];
  return (db.prepare('SELECT rowid AS id FROM t WHERE t MATCH ? ORDER BY rank').all(expression) as { id: number }[]).map((row) => row.id);
}

test('bm25 query: distinct folded words, each quoted, joined by OR', () => {
  assert.deepEqual(queryTerms('The café, the CAFE and "bridges"!'), ['the', 'cafe', 'and', 'bridges']);
  assert.equal(bm25Expression(['near', 'and']), '"near" OR "and"');
  assert.equal(bm25Expression([]), null);
  assert.equal(bm25Expression(['a"b']), '"a""b"');
  assert.equal(queryTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')).length, MAX_QUERY_TERMS);
});

test('bm25 query: FTS5 operators and punctuation in user text are words or nothing, never syntax', () => {
  const db = ftsTable();
  assert.deepEqual(match(db, 'NEAR(river bridge)'), [1]);
  assert.deepEqual(match(db, 'river AND'), [1]);
  assert.deepEqual(match(db, 'NOT river').sort(), [1, 2]);
  // A column filter would have searched the column "text" for "cafe"; here both are words.
  assert.deepEqual(match(db, 'text:cafe').sort(), [2, 3]);
  assert.deepEqual(match(db, 'OR'), [3]);
  assert.deepEqual(match(db, 'monday*'), [2]);
  assert.deepEqual(match(db, '-cafe'), [2]);
  assert.deepEqual(match(db, '^"unbalanced'), []);
  assert.deepEqual(match(db, '*:()"{}^+-'), []);
});

test('bm25 query: any string is a valid MATCH expression', () => {
  const db = ftsTable();
  const syntax = fc.constantFrom('"', '*', '(', ')', ':', '^', '-', '+', '{', '}', ' ', 'NEAR', 'AND', 'OR', 'NOT', 'text', 'rank', ',', '\u0000', 'é', '\u0301');
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.array(syntax).map((parts) => parts.join(''))), (query) => {
      assert.doesNotThrow(() => match(db, query));
    }),
    { numRuns: 500 },
  );
});

test('selective terms: weightless terms go, then the commonest while over the row budget; rare terms always stay', () => {
  const frequencies = (table: Record<string, number>) => (term: string) => new Map(Object.entries(table)).get(term) ?? 0;
  const df = frequencies({ the: 60_000, test: 30_000, runner: 10_000, zebra: 100 });
  assert.deepEqual(selectiveTerms(['the', 'test', 'runner', 'zebra'], df, 100_000), ['runner', 'zebra']);
  assert.deepEqual(selectiveTerms(['zebra', 'runner'], df, 100_000), ['zebra', 'runner']);
  // Only common words: the rarest still searches.
  assert.deepEqual(selectiveTerms(['the', 'test'], frequencies({ the: 70_000, test: 60_000 }), 100_000), ['test']);
  // Words in at most 2% of the chunks are never dropped, whatever they add up to.
  const many = Array.from({ length: 20 }, (_, i) => `w${i}`);
  assert.deepEqual(selectiveTerms(many, () => 1_500, 100_000), many);
  // A small space is under the budget's floor: every word counts. In a space of one chunk every
  // word it holds is in all of it; dropping those would leave only the words it lacks.
  assert.deepEqual(selectiveTerms(['a', 'b', 'c'], frequencies({ a: 5, b: 3, c: 1 }), 7), ['a', 'b', 'c']);
  assert.deepEqual(selectiveTerms(['when', 'hedgehogs', 'hibernate'], frequencies({ hedgehogs: 1, hibernate: 1 }), 1), ['when', 'hedgehogs', 'hibernate']);
  // Over the budget with the only weighty words absent (by their unstemmed count): the rarest word held stays too.
  assert.deepEqual(selectiveTerms(['the', 'zzz'], frequencies({ the: 90_000 }), 100_000), ['zzz', 'the']);
  assert.deepEqual(selectiveTerms(['a'], () => 7, 7), ['a']);
  assert.deepEqual(selectiveTerms([], () => 0, 7), []);
});

test('the in-memory index\'s row budget: twice the chunks, at least 5,000, at most 200,000 postings however big the space', () => {
  assert.equal(indexRowBudget(100), 5_000);
  assert.equal(indexRowBudget(50_000), 100_000);
  assert.equal(indexRowBudget(100_000), 200_000);
  assert.equal(indexRowBudget(1_000_000), 200_000);
  // At a million chunks, uncapped, every word stays (1,450,040 postings ≤ 2,000,000); capped,
  // 'pump' (in most chunks, weightless) and then 'the' go, and the query scores 150,040.
  const df = (term: string) => new Map([['pump', 900_000], ['the', 400_000], ['pressure', 150_000], ['kz25', 40]]).get(term) ?? 0;
  assert.deepEqual(selectiveTerms(['the', 'pump', 'pressure', 'kz25'], df, 1_000_000, (chunks) => 2 * chunks), ['the', 'pump', 'pressure', 'kz25']);
  assert.deepEqual(selectiveTerms(['the', 'pump', 'pressure', 'kz25'], df, 1_000_000, indexRowBudget), ['pressure', 'kz25']);
});
