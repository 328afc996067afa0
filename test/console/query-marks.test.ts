import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStopWord, queryMarks, STOP_WORDS } from '../../console/src/query-marks.ts';

/** The marks of `words` in `snippet`, as the API writes them: each word between « and ». */
function marksOf(snippet: string, words: string[]): [number, number][] {
  const marks: [number, number][] = [];
  let from = 0;
  for (const word of words) {
    const at = snippet.indexOf(`«${word}»`, from);
    assert.ok(at >= 0, word);
    marks.push([at + 1, at + 1 + word.length]);
    from = at + word.length + 2;
  }
  return marks;
}

test('query marks: stop words are not highlighted, the words the query is about are', () => {
  const snippet = 'Replace «the» «impeller» seal; «The» «impellers» wear.';
  const marks = marksOf(snippet, ['the', 'impeller', 'The', 'impellers']);
  assert.deepEqual(queryMarks(snippet, marks, 'the impeller'), marksOf(snippet, ['impeller', 'impellers']));
  // Case and accents do not matter, as in the search's own tokenizer.
  assert.equal(isStopWord('THE'), true);
  assert.equal(isStopWord('Thé'), true);
  assert.equal(isStopWord('impeller'), false);
  // Whole words only: a word that starts like a stop word is a word of its own.
  assert.equal(isStopWord('there'), true);
  assert.equal(isStopWord('theory'), false);
  assert.equal(isStopWord('anderson'), false);
});

test('query marks: a query of nothing but stop words keeps its marks (they are all it asked for)', () => {
  const snippet = '«To» «be» or not «to» «be».';
  const marks = marksOf(snippet, ['To', 'be', 'to', 'be']);
  assert.deepEqual(queryMarks(snippet, marks, 'to be'), marks);
  assert.deepEqual(queryMarks(snippet, marks, '  '), marks);
});

test('query marks: contractions split as the tokenizer splits them ("don\'t" is "don" and "t")', () => {
  assert.ok(STOP_WORDS.has('don') && STOP_WORDS.has('t') && STOP_WORDS.has('s'));
  const snippet = "«don»'«t» open the «valve»";
  const marks = marksOf(snippet, ['don', 't', 'valve']);
  assert.deepEqual(queryMarks(snippet, marks, "don't open the valve"), marksOf(snippet, ['valve']));
});

test('query marks: every stop word is written as the tokenizer writes words (lower case letters)', () => {
  for (const word of STOP_WORDS) assert.match(word, /^[a-z]+$/, word);
});
