import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stemmer } from 'stemmer';
import { markedSnippet, searchSnippet } from '../../src/spaces/search-snippet.ts';
import { fuseRanks } from '../../src/spaces/rank-fusion.ts';

const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i}`).join(' ');

test('snippet: the window around the densest cluster of distinct terms, terms marked, cut at words with ellipses', () => {
  const text = `${filler(60)} the solar panel faces south. ${filler(40)} Solar power and a battery: the panel charges the battery at noon. ${filler(60)}`;
  const snippet = searchSnippet(text, ['solar', 'panel', 'battery']);
  assert.ok(snippet.startsWith('…') && snippet.endsWith('…'), snippet);
  assert.ok(snippet.includes('«Solar» power and a «battery»: the «panel» charges the «battery» at noon'), snippet);
  assert.ok(!snippet.includes('faces south'), snippet);
  const shown = snippet.replace(/[«»…]/g, '');
  assert.ok(shown.length <= 200 + 20 && shown.length >= 120, `${shown.length}: ${snippet}`);
  // Never starts or ends inside a word.
  assert.match(snippet, /^…filler\d+ /);
  assert.match(snippet, / filler\d+…$/);
});

test('snippet: a short text whole, whitespace collapsed; no match gives the beginning', () => {
  assert.equal(searchSnippet('Tomatoes  need\n\nsun.', ['sun']), 'Tomatoes need «sun».');
  const long = `Intro words here. ${filler(100)}`;
  const snippet = searchSnippet(long, ['absent']);
  assert.ok(snippet.startsWith('Intro words here.') && snippet.endsWith('…'), snippet);
  assert.equal(searchSnippet('', ['x']), '');
});

test('snippet: words match folded, and by stem when asked', () => {
  assert.equal(searchSnippet('The CAFÉ opens.', ['cafe']), 'The «CAFÉ» opens.');
  assert.equal(searchSnippet('Installing packages', ['install', 'package']), 'Installing packages');
  assert.equal(searchSnippet('Installing packages', ['install', 'package'], { matchKey: stemmer }), '«Installing» «packages»');
  // Marks in the text are text: the snippet stays plain, whatever the text holds.
  assert.equal(searchSnippet('a <b>bold</b> «claim»', ['bold']), 'a <b>«bold»</b> «claim»');
});

/** The words at a snippet's marks, as a reader of snippet_marks sees them. */
function markedWords(text: string, terms: string[]): string[] {
  const { snippet, marks } = markedSnippet(text, terms);
  for (const [start, end] of marks) assert.deepEqual([snippet[start - 1], snippet[end]], ['«', '»'], snippet);
  return marks.map(([start, end]) => snippet.slice(start, end));
}

test('snippet marks: offsets of exactly the matched words, whatever « » the document holds', () => {
  // The document's own quotes: only "joint" is a match, and a lone « does not shift later marks.
  const text = 'Il est dit «ne jamais ouvrir» la vanne « sans vérifier le joint et le «joint» torique.';
  assert.deepEqual(markedWords(text, ['joint']), ['joint', 'joint']);
  assert.deepEqual(markedWords(text, ['ouvrir', 'vanne']), ['ouvrir', 'vanne']);
  assert.deepEqual(markedWords('nothing matches «here»', ['absent']), []);
  // Offsets hold after the leading ellipsis and collapsed whitespace.
  const long = `${filler(80)}  \n\n the «solar»   panel\tfaces «south». ${filler(80)}`;
  const { snippet, marks } = markedSnippet(long, ['solar', 'south']);
  assert.ok(snippet.startsWith('…') && snippet.includes('««solar»» panel faces ««south»».'), snippet);
  assert.deepEqual(marks.map(([a, b]) => snippet.slice(a, b)), ['solar', 'south']);
  assert.equal(markedSnippet(long, ['solar']).snippet, searchSnippet(long, ['solar']));
});

test('reciprocal rank fusion: Σ 1/(60 + rank), ranks reported per list, stable ties', () => {
  const fused = fuseRanks([
    ['a', 'b', 'c'],
    ['c', 'a', 'd'],
  ]);
  assert.deepEqual(fused.map((item) => item.key), ['a', 'c', 'b', 'd']);
  assert.deepEqual(fused[0], { key: 'a', score: 1 / 61 + 1 / 62, ranks: [1, 2] });
  assert.deepEqual(fused[1], { key: 'c', score: 1 / 63 + 1 / 61, ranks: [3, 1] });
  assert.deepEqual(fused[2], { key: 'b', score: 1 / 62, ranks: [2, null] });
  assert.deepEqual(fused[3], { key: 'd', score: 1 / 63, ranks: [null, 3] });
  // Equal scores keep first appearance; a repeat within a list counts once, at its best rank.
  assert.deepEqual(fuseRanks([['x', 'y'], ['y', 'x']]).map((item) => item.key), ['x', 'y']);
  assert.deepEqual(fuseRanks([['x', 'x']]), [{ key: 'x', score: 1 / 61, ranks: [1] }]);
  assert.deepEqual(fuseRanks([]), []);
  assert.equal(fuseRanks([[1]], 0)[0]!.score, 1);
});
