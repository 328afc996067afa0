import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { HASHED_EMBEDDER_DIMENSIONS, HASHED_EMBEDDER_ID, HashedEmbedder, priorWordWeight } from '../../src/spaces/hashed-embedder.ts';

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function bits(vector: Float32Array): string {
  return createHash('sha256').update(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)).digest('hex');
}

const SAMPLE = 'Knowledge spaces keep notes, papers and docs on your own machine — café, naïve, ﬁle, 42.';

test('hashed embedder: unit vectors of its dimension, one per text, in order', async () => {
  const embedder = new HashedEmbedder();
  assert.equal(embedder.id, HASHED_EMBEDDER_ID);
  assert.equal(embedder.dimensions, HASHED_EMBEDDER_DIMENSIONS);
  const texts = ['alpha beta', SAMPLE, 'x', 'a much longer text '.repeat(500)];
  const vectors = await embedder.embed(texts, 'document');
  assert.equal(vectors.length, texts.length);
  for (const vector of vectors) {
    assert.equal(vector.length, embedder.dimensions);
    assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-5);
  }
  assert.deepEqual(await embedder.embed([], 'query'), []);
});

test('hashed embedder: the same text gives the same bits, whatever came before and whichever instance', async () => {
  const first = new HashedEmbedder();
  const a = first.embedText(SAMPLE);
  first.embedText('something else entirely, to leave state behind '.repeat(200));
  const b = first.embedText(SAMPLE);
  const c = (await new HashedEmbedder().embed([SAMPLE], 'query'))[0]!;
  assert.equal(bits(a), bits(b));
  assert.equal(bits(a), bits(c));
  // The recorded bits of this version: a change here changes every stored vector, so it needs a new embedder id.
  assert.equal(bits(a), GOLDEN_SAMPLE_BITS);
});

test('hashed embedder: case and diacritics fold, and a text without words is the zero vector', () => {
  const embedder = new HashedEmbedder();
  assert.equal(bits(embedder.embedText('Café NAÏVE')), bits(embedder.embedText('cafe naive')));
  for (const empty of ['', '   ', '?!…—', '\u0301']) assert.ok(embedder.embedText(empty).every((value) => value === 0), JSON.stringify(empty));
});

test('hashed embedder: related texts are nearer than unrelated ones, and word forms share n-grams', () => {
  const embedder = new HashedEmbedder();
  const query = embedder.embedText('installing the package on linux');
  const related = embedder.embedText('To install the package on Linux, run the installer as root.');
  const unrelated = embedder.embedText('The recipe needs flour, butter and two eggs.');
  assert.ok(dot(query, related) > dot(query, unrelated) + 0.2);
  const variant = embedder.embedText('installation');
  assert.ok(dot(embedder.embedText('install'), variant) > dot(embedder.embedText('butter'), variant) + 0.2);
});

test('hashed embedder: a word weight moves the query toward the passages with the weighty word', () => {
  const embedder = new HashedEmbedder();
  const aboutCats = embedder.embedText('cats sleep');
  const aboutDogs = embedder.embedText('dogs bark');
  const even = embedder.embedText('cats dogs');
  assert.ok(Math.abs(dot(even, aboutCats) - dot(even, aboutDogs)) < 0.1);
  const catsRare = embedder.embedText('cats dogs', (word) => (word === 'cats' ? 5 : 0.5));
  assert.ok(dot(catsRare, aboutCats) > dot(catsRare, aboutDogs) + 0.3);
  // The prior weighs common function words down, everything else the same.
  assert.ok(priorWordWeight('the') < priorWordWeight('tomato'));
  assert.equal(priorWordWeight('tomato'), priorWordWeight('zebraphant'));
});

test('hashed embedder: dimensions are checked', () => {
  assert.throws(() => new HashedEmbedder({ dimensions: 0 }), RangeError);
  assert.throws(() => new HashedEmbedder({ dimensions: 1.5 }), RangeError);
  assert.equal(new HashedEmbedder({ dimensions: 256 }).embedText('a b c').length, 256);
});

const GOLDEN_SAMPLE_BITS = '107ec50aaadd9a48238c52b277a16953ee8356a8e1f324e8462d99e9ae121f53';
