import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { HASHED_EMBEDDER_DIMENSIONS, HASHED_EMBEDDER_ID, HASHED_EMBEDDER_V1_ID, HashedEmbedder, hashedEmbedderVersion, priorWordWeight } from '../../src/spaces/hashed-embedder.ts';
import { alphanumericPieces } from '../../src/spaces/word-tokens.ts';

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function bits(vector: Float32Array): string {
  return createHash('sha256').update(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)).digest('hex');
}

const SAMPLE = 'Knowledge spaces keep notes, papers and docs on your own machine — café, naïve, ﬁle, 42.';
/** sha256 of svc-hashed-embed-v1's vector for SAMPLE, computed by the v1 code before v2 existed. */
const V1_SAMPLE_BITS = '107ec50aaadd9a48238c52b277a16953ee8356a8e1f324e8462d99e9ae121f53';

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

const GOLDEN_SAMPLE_BITS = 'ffed9568a3c7ff311b25956c458caa5ac7215ac373160db961fb854d531ecb49';

test('hashed embedder versions: v2 is the default, v1 keeps its id and its bits', () => {
  assert.equal(new HashedEmbedder().id, 'svc-hashed-embed-v2');
  assert.equal(HASHED_EMBEDDER_ID, 'svc-hashed-embed-v2');
  const v1 = new HashedEmbedder({ version: 1 });
  assert.equal(v1.id, HASHED_EMBEDDER_V1_ID);
  assert.equal(hashedEmbedderVersion('svc-hashed-embed-v1'), 1);
  assert.equal(hashedEmbedderVersion('svc-hashed-embed-v2'), 2);
  assert.equal(hashedEmbedderVersion('toString'), undefined);
  // The digest of v1's vector for SAMPLE before version 2 existed (commit 9a2fff0): stored v1 vectors stay valid.
  assert.equal(bits(v1.embedText(SAMPLE)), V1_SAMPLE_BITS);
  assert.notEqual(bits(new HashedEmbedder().embedText(SAMPLE)), V1_SAMPLE_BITS);
});

test('alphanumericPieces: the letter and digit runs of a code, other words whole', () => {
  assert.deepEqual(alphanumericPieces('kz35'), ['kz', '35']);
  assert.deepEqual(alphanumericPieces('x86'), ['x', '86']);
  assert.deepEqual(alphanumericPieces('e2e'), ['e', '2', 'e']);
  assert.deepEqual(alphanumericPieces('3f9a2b7c'), ['3f9a2b7c']);
  assert.deepEqual(alphanumericPieces('pump'), ['pump']);
  assert.deepEqual(alphanumericPieces('2024'), ['2024']);
});

test('hashed embedder v2: a code and a compound match however they are written', () => {
  const v2 = new HashedEmbedder();
  const v1 = new HashedEmbedder({ version: 1 });
  for (const embedder of [v1, v2]) assert.ok(dot(embedder.embedText('KZ-35 pump'), embedder.embedText('kz 35 pump')) > 0.99);
  // v1 saw "kz35" as an unrelated word; v2 sees its runs.
  const spelled = (e: HashedEmbedder) => dot(e.embedText('KZ35 pump'), e.embedText('KZ-35 pump'));
  assert.ok(spelled(v2) > 0.99, String(spelled(v2)));
  assert.ok(spelled(v1) < 0.8, String(spelled(v1)));
  // v2's word pair is the two words written as one: "fish market" holds the feature of "fishmarket", "market fish" does not.
  const order = (e: HashedEmbedder) => dot(e.embedText('fishmarket'), e.embedText('fish market')) - dot(e.embedText('fishmarket'), e.embedText('market fish'));
  assert.ok(order(v2) > 0.02 && Math.abs(order(v1)) < order(v2) / 2, `${order(v2)} vs ${order(v1)}`);
});

test('hashed embedder v2: a short word or number weighs as much as a long word', () => {
  const v2 = new HashedEmbedder();
  const v1 = new HashedEmbedder({ version: 1 });
  // How much of "kz 35 pressure" is the code: v1 gave "kz" and "35" a seventh of a long word's energy.
  const share = (e: HashedEmbedder) => dot(e.embedText('kz 35 pressure'), e.embedText('kz 35'));
  assert.ok(share(v2) > 0.75 && share(v1) < 0.5, `${share(v2)} vs ${share(v1)}`);
});

test('hashed embedder v2: the query weight is the prior times idf, and a word the space lacks weighs as one seen once', () => {
  const v2 = new HashedEmbedder();
  const v1 = new HashedEmbedder({ version: 1 });
  const idf = (df: number, n: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  assert.equal(v2.queryWordWeight('pump', 3, 100), idf(3, 100));
  assert.equal(v2.queryWordWeight('pump', 0, 100), idf(1, 100));
  assert.equal(v2.queryWordWeight('what', 0, 100), priorWordWeight('what') * idf(1, 100));
  assert.equal(v1.queryWordWeight('what', 0, 100), idf(0, 100));
});
