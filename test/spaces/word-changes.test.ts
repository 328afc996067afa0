import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_COUNTED_WORD, WordChanges } from '../../src/spaces/word-changes.ts';

test('WordChanges: each chunk counts each of its words once, removals count down, net zero leaves the list', () => {
  const changes = new WordChanges();
  changes.add('Pump pump PUMP valve', 1);
  changes.add('pump seal', 1);
  changes.add('valve gasket', -1);
  changes.add(`seal ${'x'.repeat(MAX_COUNTED_WORD + 1)} ${'y'.repeat(MAX_COUNTED_WORD)}`, 1);
  assert.deepEqual(new Map(changes.entries()), new Map([
    ['pump', 2],
    ['seal', 2],
    ['gasket', -1],
    ['y'.repeat(MAX_COUNTED_WORD), 1],
  ]));
});

test('WordChanges: a replaced chunk with the same words changes nothing', () => {
  const changes = new WordChanges();
  changes.add('the pump and the valve', -1);
  changes.add('the valve and the pump', 1);
  assert.deepEqual([...changes.entries()], []);
});
