import type { Embedder } from './space-types.ts';
import { foldedWords } from './word-tokens.ts';

export const HASHED_EMBEDDER_ID = 'svc-hashed-embed-v1';
/**
 * 384, not 256: on a known-item test (13,048 markdown sections of the packages on this machine,
 * 1,000 section headings as queries, the section as the answer) 384 buckets found the section
 * in the top 10 for 62.6% of the queries against 57.4% for 256 (MRR@10 0.402 vs 0.377): fewer
 * hash collisions. 512 gained less again (64.0%) for a third more memory and scan time.
 */
export const HASHED_EMBEDDER_DIMENSIONS = 384;

/** A word's weight in a text: the prior below, or a space's inverse document frequency. */
export type WordWeight = (word: string) => number;

/**
 * The built-in embedder: no weights to download, the same bits on every machine.
 *
 * A text becomes a bag of hashed features, folded like FTS5 folds (word-tokens.ts):
 *  - each word (weight 1),
 *  - each pair of adjacent words (BIGRAM_WEIGHT; word order, phrases),
 *  - the character 3-, 4- and 5-grams of each word with boundary marks (fastText's trick:
 *    "install", "installed" and "instalation" share most of them), scaled so that a word's
 *    n-grams together weigh NGRAM_WEIGHT whatever its length. They weigh more than the word
 *    itself: besides matching variants they spread each word over many buckets, which averages
 *    out hash collisions (on the test below, n-gram weight 0.8 → 2.5 took top-10 recall
 *    from 55% to 63%; bigram weight 1.0 → 0.3 from 51% to 55%).
 * A feature's value is its class weight times sqrt(Σ w²) over its occurrences, w being the
 * weight of the word it came from: sublinear in the count (sqrt(tf) for equal w). Signed feature
 * hashing projects the features to `dimensions` buckets (the sign keeps collisions unbiased),
 * and the vector is L2-normalized.
 *
 * IDF without stale vectors: stored (document) vectors only use a fixed built-in prior (common
 * English function words weigh STOPWORD_WEIGHT), so nothing stored depends on what else is in a
 * space. In a space, the query vector weighs each word by the space's inverse document frequency
 * instead (embedText with a WordWeight): the dot product then weights each shared feature by its
 * word's idf once, which is what tf-idf cosine needs, and the statistics can change freely.
 * Stateless `embed` (what /v1/embeddings serves) uses the prior on both sides.
 *
 * Determinism: 32-bit integer hashing (Math.imul), sums in a fixed order, and only sqrt and
 * division (exactly rounded by IEEE 754) in float arithmetic, so no libm differences.
 */
export class HashedEmbedder implements Embedder {
  readonly id = HASHED_EMBEDDER_ID;
  readonly dimensions: number;
  readonly #features = new FeatureTable();

  constructor(options: { dimensions?: number } = {}) {
    const dimensions = options.dimensions ?? HASHED_EMBEDDER_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 65536) throw new RangeError(`hashed embedder: bad dimension ${dimensions}`);
    this.dimensions = dimensions;
  }

  async embed(texts: readonly string[], _purpose: 'document' | 'query'): Promise<Float32Array[]> {
    return texts.map((text) => this.embedText(text));
  }

  /** One text's vector with each word weighed by `weightOf` (the prior unless told); all zeros for a text without words. */
  embedText(text: string, weightOf: WordWeight = priorWordWeight): Float32Array {
    const features = this.#features;
    features.clear();
    let previousHash = 0;
    let previousWeight = 0;
    for (const word of foldedWords(text)) {
      const weight = weightOf(word);
      const wordHash = hashString(word, WORD_SEED);
      features.add(wordHash, weight * weight);
      if (previousHash !== 0) {
        const pairWeight = BIGRAM_WEIGHT * Math.min(weight, previousWeight);
        features.add(fmix32(Math.imul(previousHash, 0x01000193) ^ wordHash ^ BIGRAM_SEED), pairWeight * pairWeight);
      }
      previousHash = wordHash;
      previousWeight = weight;
      addNgrams(features, word, weight);
    }
    return features.project(this.dimensions);
  }
}

const WORD_SEED = 0x811c9dc5;
const BIGRAM_SEED = 0x5bd1e995;
const NGRAM_SEED = 0x27d4eb2f;
const BIGRAM_WEIGHT = 0.3;
const NGRAM_WEIGHT = 2.5;
const STOPWORD_WEIGHT = 0.15;
/** Longer "words" (hashes, base64, URLs run together) get n-grams of their start only. */
const MAX_NGRAM_WORD = 24;
const BEGIN_MARK = 1;
const END_MARK = 2;

/** n-grams per word length, so a word's n-grams weigh NGRAM_WEIGHT together: NGRAM_SCALE[L]² · count = NGRAM_WEIGHT². */
const NGRAM_SCALE = Float64Array.from({ length: MAX_NGRAM_WORD + 1 }, (_, length) => {
  const padded = length + 2;
  const count = Math.max(0, padded - 2) + Math.max(0, padded - 3) + Math.max(0, padded - 4);
  return count === 0 ? 0 : NGRAM_WEIGHT / Math.sqrt(count);
});

function addNgrams(features: FeatureTable, word: string, weight: number): void {
  const length = Math.min(word.length, MAX_NGRAM_WORD);
  // Short words are whole-word matches already; digits are identifiers, not morphology.
  if (length < 3 || isDigits(word)) return;
  const scale = NGRAM_SCALE[length]! * weight;
  const value = scale * scale;
  const last = length + 1;
  for (let start = 0; start <= last; start++) {
    let h = NGRAM_SEED;
    for (let n = 0; n < 5 && start + n <= last; n++) {
      const at = start + n;
      const code = at === 0 ? BEGIN_MARK : at === last ? END_MARK : word.charCodeAt(at - 1);
      h = Math.imul(h ^ code, 0x01000193);
      if (n >= 2) features.add(fmix32(h), value);
    }
  }
}

function isDigits(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** FNV-1a over UTF-16 code units, finished with murmur3's mixer. */
function hashString(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

/** murmur3's finalizer: every input bit moves every output bit. Never 0 (the feature table's empty key). */
function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h === 0 ? 1 : h;
}

/**
 * Feature hash → Σ w², open addressing in typed arrays (a Map per text was most of the time),
 * reused from text to text. Iteration follows first insertion, so sums run in text order.
 */
class FeatureTable {
  #keys = new Int32Array(1024);
  #values = new Float64Array(1024);
  #order = new Int32Array(1024);
  #size = 0;

  clear(): void {
    const keys = this.#keys;
    const order = this.#order;
    for (let i = 0; i < this.#size; i++) keys[order[i]!] = 0;
    this.#size = 0;
  }

  add(key: number, value: number): void {
    const keys = this.#keys;
    const mask = keys.length - 1;
    let slot = key & mask;
    for (;;) {
      const found = keys[slot]!;
      if (found === key) {
        this.#values[slot]! += value;
        return;
      }
      if (found === 0) break;
      slot = (slot + 1) & mask;
    }
    keys[slot] = key;
    this.#values[slot] = value;
    this.#order[this.#size++] = slot;
    if (this.#size * 2 > keys.length) this.#grow();
  }

  project(dimensions: number): Float32Array {
    const sums = new Float64Array(dimensions);
    const keys = this.#keys;
    const values = this.#values;
    const order = this.#order;
    for (let i = 0; i < this.#size; i++) {
      const slot = order[i]!;
      // The bucket and the sign come from different bits of a second mix of the key.
      const mixed = fmix32(keys[slot]! ^ 0x9e3779b9);
      const bucket = (mixed & 0xffff) % dimensions;
      const magnitude = Math.sqrt(values[slot]!);
      sums[bucket]! += mixed < 0 ? -magnitude : magnitude;
    }
    let norm = 0;
    for (let j = 0; j < dimensions; j++) norm += sums[j]! * sums[j]!;
    const vector = new Float32Array(dimensions);
    if (norm === 0) return vector;
    norm = Math.sqrt(norm);
    for (let j = 0; j < dimensions; j++) vector[j] = sums[j]! / norm;
    return vector;
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    const oldOrder = this.#order;
    const capacity = oldKeys.length * 2;
    this.#keys = new Int32Array(capacity);
    this.#values = new Float64Array(capacity);
    this.#order = new Int32Array(capacity);
    const size = this.#size;
    this.#size = 0;
    for (let i = 0; i < size; i++) {
      const slot = oldOrder[i]!;
      this.add(oldKeys[slot]!, oldValues[slot]!);
    }
  }
}

/**
 * The fixed prior: the commonest English function words say little about what a passage is
 * about. A list, not statistics, so a stored vector never depends on other documents.
 */
export function priorWordWeight(word: string): number {
  return STOPWORDS.has(word) ? STOPWORD_WEIGHT : 1;
}

const STOPWORDS = new Set(
  ('a about above after again all also am an and any are as at be because been before being below between both but by can could did do does doing '
    + 'down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me '
    + 'more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the '
    + 'their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who '
    + 'whom why will with would you your yours yourself yourselves').split(' '),
);
