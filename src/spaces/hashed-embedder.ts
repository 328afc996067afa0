import type { Embedder } from './space-types.ts';
import { alphanumericPieces, foldedWords } from './word-tokens.ts';

/** The built-in embedder new spaces get (version 2, below). */
export const HASHED_EMBEDDER_ID = 'svc-hashed-embed-v2';
/** The first version: spaces that recorded it keep searching and ingesting with it until reindexed. */
export const HASHED_EMBEDDER_V1_ID = 'svc-hashed-embed-v1';
export type HashedEmbedderVersion = 1 | 2;
const VERSION_IDS: Readonly<Record<HashedEmbedderVersion, string>> = { 1: HASHED_EMBEDDER_V1_ID, 2: HASHED_EMBEDDER_ID };

/** The built-in version an embedder id names, or undefined for any other id. */
export function hashedEmbedderVersion(id: string): HashedEmbedderVersion | undefined {
  if (id === HASHED_EMBEDDER_ID) return 2;
  if (id === HASHED_EMBEDDER_V1_ID) return 1;
  return undefined;
}
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
 *
 * Version 2 (`svc-hashed-embed-v2`, the default) changes what version 1 did wrong on the labelled
 * set (docs/spaces.md, "The built-in embedder"); its vectors differ, hence the new id:
 *  - a word that mixes letters and digits is also its runs ("kz35" → "kz", "35": alphanumericPieces),
 *    so "KZ35", "KZ-35" and "KZ 35" become the same words;
 *  - every word carries the same energy: one without n-grams (under 3 letters, or digits) puts
 *    the n-grams' share on its word feature. Version 1 gave "kz" and "35" a seventh of the energy
 *    of "pressure", so a product code, usually what a query is about, hardly moved the vector;
 *  - the word-pair feature is the hash of the two words run together, the same feature as that
 *    single word: "fish market" meets "fishmarket", "kz 35" meets "kz35";
 *  - the query's word weight (queryWordWeight) is the prior times the space's idf (version 1
 *    replaced the prior, so a stopword the space lacks weighed most of all), and a word the space
 *    lacks weighs as one seen once: it can only match through its n-grams.
 */
export class HashedEmbedder implements Embedder {
  readonly id: string;
  readonly version: HashedEmbedderVersion;
  readonly dimensions: number;
  readonly #features = new FeatureTable();

  constructor(options: { dimensions?: number; version?: HashedEmbedderVersion } = {}) {
    const dimensions = options.dimensions ?? HASHED_EMBEDDER_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 65536) throw new RangeError(`hashed embedder: bad dimension ${dimensions}`);
    this.dimensions = dimensions;
    this.version = options.version ?? 2;
    this.id = VERSION_IDS[this.version];
  }

  /**
   * A query word's weight in a space of `chunks` chunks, `df` of which hold it: the space's
   * inverse document frequency (BM25's, floored above 0), times the prior from version 2 on.
   */
  queryWordWeight(word: string, df: number, chunks: number): number {
    if (this.version === 1) return idf(df, chunks);
    return priorWordWeight(word) * idf(Math.max(df, 1), chunks);
  }

  /**
   * A query's vector in a space of `chunks` chunks, each word weighed by queryWordWeight with
   * `frequency(word)` chunks holding it (what search does; the words it asks about are
   * queryWeightWords(query)).
   */
  queryVector(query: string, frequency: (word: string) => number, chunks: number): Float32Array {
    return this.embedText(query, (word) => this.queryWordWeight(word, frequency(word), chunks));
  }

  async embed(texts: readonly string[], _purpose: 'document' | 'query'): Promise<Float32Array[]> {
    return texts.map((text) => this.embedText(text));
  }

  /** One text's vector with each word weighed by `weightOf` (the prior unless told); all zeros for a text without words. */
  embedText(text: string, weightOf: WordWeight = priorWordWeight): Float32Array {
    const features = this.#features;
    features.clear();
    if (this.version === 1) addFeaturesV1(features, text, weightOf);
    else addFeaturesV2(features, text, weightOf);
    return features.project(this.dimensions);
  }
}

/** The distinct words whose document frequencies a query's vector (queryVector) weighs: its folded words and a code's runs ("kz35" → "kz", "35"). */
export function queryWeightWords(query: string): string[] {
  return [...new Set(foldedWords(query).flatMap((word) => [word, ...alphanumericPieces(word)]))];
}

function idf(df: number, chunks: number): number {
  return Math.log(1 + (chunks - df + 0.5) / (df + 0.5));
}

function addFeaturesV1(features: FeatureTable, text: string, weightOf: WordWeight): void {
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
}

function addFeaturesV2(features: FeatureTable, text: string, weightOf: WordWeight): void {
  let previousState = 0;
  let previousWeight = 0;
  for (const folded of foldedWords(text)) {
    for (const word of alphanumericPieces(folded)) {
      const weight = weightOf(word);
      const state = fnv(word, WORD_SEED);
      const ngrams = hasNgrams(word);
      features.add(fmix32(state), weight * weight * (ngrams ? 1 : WORD_ENERGY));
      if (previousState !== 0) {
        // FNV runs on from the previous word's state: the hash of the two words written as one.
        const pairWeight = BIGRAM_WEIGHT * Math.min(weight, previousWeight);
        features.add(fmix32(fnvFrom(previousState, word)), pairWeight * pairWeight);
      }
      previousState = state;
      previousWeight = weight;
      if (ngrams) addNgrams(features, word, weight);
    }
  }
}

const WORD_SEED = 0x811c9dc5;
const BIGRAM_SEED = 0x5bd1e995;
const NGRAM_SEED = 0x27d4eb2f;
const BIGRAM_WEIGHT = 0.3;
const NGRAM_WEIGHT = 2.5;
/** A whole word's energy in version 2: its word feature plus its n-grams, or the word feature alone. */
const WORD_ENERGY = 1 + NGRAM_WEIGHT * NGRAM_WEIGHT;
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

/** Short words are whole-word matches already; digits are identifiers, not morphology. */
function hasNgrams(word: string): boolean {
  return word.length >= 3 && !isDigits(word);
}

function addNgrams(features: FeatureTable, word: string, weight: number): void {
  const length = Math.min(word.length, MAX_NGRAM_WORD);
  if (!hasNgrams(word)) return;
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
  return fmix32(fnv(text, seed));
}

/** FNV-1a's state after `text` (never 0 in practice; 0 stands for "no previous word"). */
function fnv(text: string, seed: number): number {
  return fnvFrom(seed, text);
}

function fnvFrom(state: number, text: string): number {
  let h = state;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
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
  #sums = new Float64Array(0);

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
    // The sums are scratch, reused from text to text (zeroed here): one allocation less per text.
    if (this.#sums.length !== dimensions) this.#sums = new Float64Array(dimensions);
    const sums = this.#sums;
    sums.fill(0);
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
