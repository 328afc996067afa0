import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeSamplerCounts, SamplerResultError } from '../../../src/quantum/hardware/decode-sampler-counts.ts';

const register = (c: Record<string, unknown>): unknown => ({ results: [{ data: { c } }] });
const expect3 = { bits: 3, shots: 10 };

describe('decodeSamplerCounts: only counts the submitted circuit could have produced', () => {
  it('reads hex samples, hex counts and exact-width bitstring counts; zero counts and fewer shots than asked are fine', () => {
    assert.deepEqual([...decodeSamplerCounts(register({ samples: ['0x5', '0x5', '0x0', '0x07'], num_bits: 3 }), expect3).counts], [[5, 2], [0, 1], [7, 1]]);
    const hex = decodeSamplerCounts(register({ counts: { '0x5': 6, '0x1': 0, '0x2': 4 } }), expect3);
    assert.deepEqual([...hex.counts], [[5, 6], [2, 4]]);
    assert.equal(hex.total, 10);
    const bitstrings = decodeSamplerCounts(register({ counts: { 101: 3, '001': 2 } }), expect3);
    assert.deepEqual([...bitstrings.counts].sort(), [[1, 2], [5, 3]]);
    assert.equal(bitstrings.total, 5);
  });

  const refused: [string, unknown, RegExp][] = [
    ['a bitstring wider than the register', register({ counts: { 1000: 4 } }), /bitstring "1000" of 4 bits where the circuit measures 3/],
    ['a bitstring narrower than the register', register({ counts: { 11: 4 } }), /bitstring "11" of 2 bits/],
    ['a hex value past the register', register({ samples: ['0x5', '0x8'] }), /outcome "0x8" wider than the 3-bit register/],
    ['num_bits that is not the register\'s', register({ samples: ['0x1'], num_bits: 4 }), /register of 4 bits where the circuit measures 3/],
    ['a key that is neither hex nor binary', register({ counts: { '0x1': 2, '1a0': 1 } }), /outcome "1a0" that is neither 0x-hex nor a bitstring/],
    ['a __proto__ key', JSON.parse('{"results":[{"data":{"c":{"counts":{"__proto__":5}}}}]}'), /outcome "__proto__" that is neither/],
    ['a constructor key', register({ counts: { constructor: 5 } }), /outcome "constructor"/],
    ['a negative count', register({ counts: { '0x1': -3 } }), /count of -3 for "0x1"/],
    ['a fractional count', register({ counts: { '0x1': 2.5 } }), /count of 2\.5 for "0x1"/],
    ['a count given as a string', register({ counts: { '0x1': '5' } }), /count of "5" for "0x1"/],
    ['a sample that is not a string', register({ samples: ['0x1', 3] }), /sample that is not a string/],
    ['no shots at all (empty counts)', register({ counts: {} }), /no shots at all/],
    ['no shots at all (empty samples)', register({ samples: [] }), /no shots at all/],
    ['no shots at all (only zero counts)', register({ counts: { '0x1': 0 } }), /no shots at all/],
    ['more shots than requested', register({ counts: { '0x1': 8, '0x2': 3 } }), /more shots than the 10 requested/],
    ['more samples than requested', register({ samples: Array<string>(11).fill('0x1') }), /more shots than the 10 requested/],
    ['no results field', { metadata: {} }, /no results array/],
    ['results that are not a list', { results: { data: {} } }, /no results array/],
    ['an empty results list', { results: [] }, /0 results where one circuit was submitted/],
    ['a result without data', { results: [{}] }, /a result without its data/],
    ['two registers', { results: [{ data: { c: { samples: ['0x1'] }, d: { samples: ['0x1'] } } }] }, /2 classical registers/],
    ['neither samples nor counts', register({ num_bits: 3 }), /neither samples nor counts/],
    ['a body that is not an object', 'not json at all', /no results array/],
  ];
  for (const [what, body, message] of refused) {
    it(`refuses ${what}`, () => {
      assert.throws(() => decodeSamplerCounts(body, expect3), (error: unknown) => error instanceof SamplerResultError && message.test(error.message));
    });
  }

  it('a __proto__ key leaves Object.prototype alone', () => {
    assert.throws(() => decodeSamplerCounts(JSON.parse('{"results":[{"data":{"c":{"counts":{"__proto__":{"polluted":1}}}}}]}'), expect3), SamplerResultError);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});
