/**
 * The stop-sequence matcher against a character-by-character reference: whatever the chunking,
 * the reply is the text cut before the stop sequence that completes first (the longer one on a
 * tie), or the whole text; while streaming, only the longest suffix that could begin a stop
 * sequence is held back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { StopSequenceMatcher } from '../../src/inference/stop-sequence-matcher.ts';

/** The definition, one UTF-16 code unit at a time. */
function reference(text: string, stops: readonly string[]): { reply: string; stopped: boolean } {
  const live = stops.filter((s) => s !== '');
  for (let end = 1; end <= text.length; end++) {
    const seen = text.slice(0, end);
    const ending = live.filter((s) => seen.endsWith(s));
    if (ending.length > 0) return { reply: text.slice(0, end - Math.max(...ending.map((s) => s.length))), stopped: true };
  }
  return { reply: text, stopped: false };
}

/** Feeds `chunks`, checking after each that only a possible partial match is held back. */
function run(chunks: readonly string[], stops: readonly string[]): { reply: string; stopped: boolean; deltas: string[] } {
  const matcher = new StopSequenceMatcher(stops);
  const deltas: string[] = [];
  let seen = '';
  let released = '';
  for (const chunk of chunks) {
    const delta = matcher.push(chunk);
    deltas.push(delta);
    released += delta;
    if (matcher.stopped) break;
    seen += chunk;
    const held = seen.slice(released.length);
    assert.ok(seen.startsWith(released), 'released text is a prefix of the generated text');
    // What is held back could still begin a stop sequence (every shorter suffix is released).
    if (held !== '') assert.ok(stops.some((s) => s.startsWith(held) || s.startsWith(held.slice(1))), `held ${JSON.stringify(held)} for ${JSON.stringify(stops)}`);
    for (let longer = held.length + 2; longer <= seen.length; longer++) {
      const suffix = seen.slice(seen.length - longer);
      assert.ok(!stops.some((s) => s !== '' && s.length > suffix.length && s.startsWith(suffix)), `released ${JSON.stringify(suffix)}, which may begin a stop`);
    }
  }
  if (!matcher.stopped) released += matcher.flush();
  return { reply: released, stopped: matcher.stopped, deltas };
}

/** Splits `text` at the given cut points (code-unit offsets). */
function split(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const p of points) {
    chunks.push(text.slice(from, p));
    from = p;
  }
  chunks.push(text.slice(from));
  return chunks;
}

describe('StopSequenceMatcher', () => {
  test('cuts exactly before the first match, across chunk boundaries', () => {
    assert.deepEqual(run(['Hel', 'lo wo', 'rld'], ['o w']).reply, 'Hell');
    assert.deepEqual(run(['ab', 'c', 'd'], ['bcd', 'c']).reply, 'ab', "'c' completes before 'bcd'");
    assert.deepEqual(run(['abcd'], ['bcd', 'c']).reply, 'ab', 'the same when both arrive in one chunk');
    assert.deepEqual(run(['xabc'], ['abc', 'bc']).reply, 'x', 'on a tie the longer (earlier) one');
  });

  test('held-back text is released when the generation ends without a match', () => {
    const out = run(['one two', ' thr'], [' three']);
    assert.equal(out.reply, 'one two thr');
    assert.equal(out.stopped, false);
    assert.deepEqual(out.deltas, ['one two', ''], "' thr' was held back until the end");
  });

  test('streaming holds back only the suffix that may begin a stop sequence', () => {
    assert.deepEqual(run(['a<', '/e', 'x'], ['</end>']).deltas, ['a', '', '</ex']);
    assert.deepEqual(run(['a<', '/b'], ['</end>']).deltas, ['a', '</b']);
    assert.deepEqual(run(['hello'], ['xyz']).deltas, ['hello']);
  });

  test('multi-byte characters: a stop made of them, and text around them, split anywhere', () => {
    assert.equal(run(['caf', 'é ', 'olé!'], ['é!']).reply, 'café ol');
    assert.equal(run(['😀', '😀x'], ['😀x']).reply, '😀');
    // A stop beginning with a lone low surrogate never splits a pair between deltas.
    const deltas = run(['a😀'], ['\uDE00z']).deltas;
    assert.deepEqual(deltas, ['a']);
  });

  test('empty stop strings match nothing; no stops release everything at once', () => {
    assert.deepEqual(run(['ab', 'c'], ['']).deltas, ['ab', 'c']);
    assert.deepEqual(run(['ab', 'c'], []).deltas, ['ab', 'c']);
  });

  test('text after a match is ignored', () => {
    const matcher = new StopSequenceMatcher(['x']);
    assert.equal(matcher.push('abxcd'), 'ab');
    assert.equal(matcher.push('more'), '');
    assert.equal(matcher.flush(), '');
  });

  test('matched names the stop sequence that ended the text: the one that completes first', () => {
    const matcher = new StopSequenceMatcher(['END', 'D!', 'zz']);
    assert.equal(matcher.matched, undefined);
    assert.equal(matcher.push('abc EN'), 'abc ');
    assert.equal(matcher.matched, undefined);
    assert.equal(matcher.push('D! more'), '');
    assert.equal(matcher.matched, 'END');
    const other = new StopSequenceMatcher(['xyz', 'yz']);
    other.push('axyzb');
    assert.equal(other.matched, 'xyz', 'a tie on the end: the longer one');
    const none = new StopSequenceMatcher(['q']);
    none.push('abc');
    none.flush();
    assert.equal(none.matched, undefined);
  });

  test('property: any text, stops and chunking give the reference reply', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', ' ', '\n', 'é', '😀', '<', '/');
    const text = fc.array(alphabet, { maxLength: 40 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.array(alphabet, { maxLength: 5 }).map((cs) => cs.join('')), { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 10 }), (t, stops, cuts) => {
        const expected = reference(t, stops);
        const got = run(split(t, cuts), stops);
        assert.equal(got.reply, expected.reply);
        assert.equal(got.stopped, expected.stopped);
      }),
      { numRuns: 3000 },
    );
  });
});
