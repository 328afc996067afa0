import { stemmer } from 'stemmer';
import { grownCapacity } from './grown-capacity.ts';
import { siftDown, siftUp } from './top-k-heap.ts';
import { foldedWords } from './word-tokens.ts';

/**
 * The BM25 half of a space's search, in memory: per term, the chunks holding it with the
 * term's count there, scored term at a time into a dense accumulator. It computes FTS5's
 * bm25() (k1 = 1.2, b = 0.75, idf = ln((N − n + 0.5) / (n + 0.5)) clamped to 1e-6, lengths in
 * tokens) over the same tokens as the FTS5 table (unicode61 words, Porter stems), so it ranks
 * as FTS5 does; FTS5 matched and scored every row that held any query term at 1–2 µs a row,
 * where this adds a posting in a few ns (docs/BENCHMARKS.md, "Knowledge spaces: BM25 index").
 *
 * Derived state, like the vector index: SQLite stays the truth, the index is filled from the
 * store's chunk text on a space's first BM25 search and updated after each committed write,
 * and results are read back from the store by id, so a chunk deleted since never shows.
 *
 * Ids are chunk row ids (safe integers). Memory: 6 bytes per distinct (term, chunk) pair in
 * postings (grown as grownPostings says), 4 more for the chunk's own term list (one shared pool), plus
 * the vocabulary: about 1.16 KB a chunk of generated text (370 B of heap, 790 B of typed arrays,
 * measured at 30,000 chunks; with a typed array per chunk's term list it was 1.37 KB). At 100,000
 * chunks: 860 B of typed arrays while they doubled, 620 B growing by a quarter, 250 B of heap.
 */

const K1 = 1.2;
const B = 0.75;
/** FTS5's porter tokenizer passes longer tokens through unstemmed (FTS5_PORTER_MAX_TOKEN). */
const MAX_STEMMED = 64;
/** Term counts are kept in 16 bits; a chunk repeating a word more often scores as if it were this many. */
const MAX_TF = 0xffff;
const INITIAL_CAPACITY = 1024;

export interface Bm25Hit {
  id: number;
  /** FTS5's bm25() negated: larger is better. */
  score: number;
}

interface Postings {
  slots: Int32Array;
  tfs: Uint16Array;
  length: number;
}

/**
 * `text` in memory of its own. V8 keeps a slice of 13 or more characters (what the tokenizer's
 * `slice` and `split` return, and a stem cut from such a word) as a view of the string it was cut
 * from, so a word kept as a key of the index's maps kept the whole lowercased chunk it first came
 * from: as much again as the text itself in a space full of ids, hashes and timestamps. Only new
 * keys are copied; a lookup needs none.
 */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** FTS5's token for a folded word: its Porter stem. */
export function bm25Token(word: string): string {
  return word.length > MAX_STEMMED ? word : stemmer(word);
}

export class Bm25Index {
  /** Stem (FTS5's token) → term number. */
  readonly #terms = new Map<string, number>();
  /** Folded word → term number: stemming is the costly part of tokenizing, and a space's words repeat. */
  readonly #wordTerms = new Map<string, number>();
  readonly #postings: Postings[] = [];
  readonly #slotOf = new Map<number, number>();
  #ids = new Float64Array(INITIAL_CAPACITY);
  /** Per slot: its length in tokens (what FTS5's docsize holds). */
  #lengths = new Uint32Array(INITIAL_CAPACITY);
  /**
   * Per slot: its distinct terms, to take it out of their postings again, as a run of #termPool
   * from #termStart, #termCount long. One pool rather than a typed array per chunk: each of those
   * cost ~200 bytes of object and allocation besides its terms.
   */
  #termPool = new Int32Array(INITIAL_CAPACITY * 16);
  #poolUsed = 0;
  /** Pool entries of removed chunks, reclaimed by #compactPool once they are half of it. */
  #poolFreed = 0;
  #termStart = new Uint32Array(INITIAL_CAPACITY);
  #termCount = new Uint32Array(INITIAL_CAPACITY);
  #freeSlots: number[] = [];
  #slotCount = 0;
  #tokenTotal = 0;
  /** The term-at-a-time accumulator, one entry per slot, zero between searches. */
  #scores = new Float64Array(INITIAL_CAPACITY);
  /** Per term: its count in the chunk being added (zero otherwise). */
  #termCounts = new Uint32Array(INITIAL_CAPACITY);
  #touched = new Int32Array(INITIAL_CAPACITY);

  get size(): number {
    return this.#slotOf.size;
  }

  has(id: number): boolean {
    return this.#slotOf.has(id);
  }

  /** Adds chunks (or replaces them, by id) with their text. */
  upsert(entries: Iterable<{ id: number; text: string }>): void {
    for (const { id, text } of entries) {
      if (this.#slotOf.has(id)) this.remove([id]);
      this.#add(id, text);
    }
  }

  remove(ids: Iterable<number>): void {
    for (const id of ids) {
      const slot = this.#slotOf.get(id);
      if (slot === undefined) continue;
      this.#slotOf.delete(id);
      const start = this.#termStart[slot]!;
      const end = start + this.#termCount[slot]!;
      for (let t = start; t < end; t++) {
        const postings = this.#postings[this.#termPool[t]!]!;
        const at = postings.slots.subarray(0, postings.length).indexOf(slot);
        const last = postings.length - 1;
        // Order within a term's postings does not matter to a term-at-a-time scan: the last takes its place.
        postings.slots[at] = postings.slots[last]!;
        postings.tfs[at] = postings.tfs[last]!;
        postings.length = last;
      }
      this.#poolFreed += this.#termCount[slot]!;
      this.#termCount[slot] = 0;
      this.#tokenTotal -= this.#lengths[slot]!;
      this.#freeSlots.push(slot);
    }
    if (this.#poolFreed > 4096 && this.#poolFreed * 2 > this.#poolUsed) this.#compactPool();
  }

  /**
   * The best `k` chunks for the query words (folded words, each one OR-ed phrase of FTS5's
   * expression: two words with one stem count twice, as there), best first, ties by id;
   * `accept` (document and metadata filters) drops ids before they count.
   */
  search(words: readonly string[], k: number, accept?: (id: number) => boolean): Bm25Hit[] {
    const rows = this.#slotOf.size;
    if (rows === 0 || k <= 0) return [];
    const averageLength = this.#tokenTotal / rows;
    const scores = this.#scores;
    const lengths = this.#lengths;
    const touched = this.#touched;
    let touchedCount = 0;
    const norm = K1 * B / averageLength;
    const base = K1 * (1 - B);
    for (const word of words) {
      const term = this.#terms.get(bm25Token(word));
      if (term === undefined) continue;
      const { slots, tfs, length } = this.#postings[term]!;
      if (length === 0) continue;
      let idf = Math.log((rows - length + 0.5) / (length + 0.5));
      if (idf <= 0) idf = 1e-6;
      const weight = idf * (K1 + 1);
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        const tf = tfs[i]!;
        const previous = scores[slot]!;
        if (previous === 0) touched[touchedCount++] = slot;
        scores[slot] = previous + weight * tf / (tf + base + norm * lengths[slot]!);
      }
    }
    // The heap inline rather than through BestSlots (top-k-heap.ts): this loop runs once per
    // touched chunk, up to 200,000 a query, and the method call per chunk cost 3–4% of a search
    // (200,000 generated chunks, the labelled questions: 0.89–0.95 against 0.93–0.99 ms).
    const limit = Math.min(k, touchedCount);
    const heapScores = new Float64Array(limit);
    const heapSlots = new Int32Array(limit);
    let count = 0;
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      const score = scores[slot]!;
      scores[slot] = 0;
      if (accept !== undefined && !accept(this.#ids[slot]!)) continue;
      if (count < limit) siftUp(heapScores, heapSlots, count++, score, slot);
      else if (score > heapScores[0]!) siftDown(heapScores, heapSlots, count, score, slot);
    }
    const hits: Bm25Hit[] = [];
    for (let i = 0; i < count; i++) hits.push({ id: this.#ids[heapSlots[i]!]!, score: heapScores[i]! });
    return hits.sort((a, b) => b.score - a.score || a.id - b.id);
  }

  #add(id: number, text: string): void {
    const words = foldedWords(text);
    // Counted in a per-term array that is zero between adds, and its touched terms listed.
    const distinct: number[] = [];
    for (const word of words) {
      const term = this.#term(word);
      const count = this.#termCounts[term]!;
      if (count === 0) distinct.push(term);
      this.#termCounts[term] = count + 1;
    }
    const slot = this.#freeSlots.pop() ?? this.#newSlot();
    this.#slotOf.set(id, slot);
    this.#ids[slot] = id;
    this.#lengths[slot] = words.length;
    this.#tokenTotal += words.length;
    if (this.#poolUsed + distinct.length > this.#termPool.length) {
      const pool = new Int32Array(grownCapacity(this.#termPool.length, this.#poolUsed + distinct.length));
      pool.set(this.#termPool.subarray(0, this.#poolUsed));
      this.#termPool = pool;
    }
    this.#termStart[slot] = this.#poolUsed;
    this.#termCount[slot] = distinct.length;
    this.#termPool.set(distinct, this.#poolUsed);
    this.#poolUsed += distinct.length;
    for (const term of distinct) {
      const tf = this.#termCounts[term]!;
      this.#termCounts[term] = 0;
      const postings = this.#postings[term]!;
      if (postings.length === postings.slots.length) {
        const slots = new Int32Array(grownPostings(postings.slots.length));
        slots.set(postings.slots);
        const tfs = new Uint16Array(slots.length);
        tfs.set(postings.tfs);
        postings.slots = slots;
        postings.tfs = tfs;
      }
      postings.slots[postings.length] = slot;
      postings.tfs[postings.length] = Math.min(tf, MAX_TF);
      postings.length++;
    }
  }

  /** Moves the live slots' term runs together, dropping those of removed chunks. */
  #compactPool(): void {
    const pool = new Int32Array(Math.max(INITIAL_CAPACITY, (this.#poolUsed - this.#poolFreed) * 2));
    let used = 0;
    for (const slot of this.#slotOf.values()) {
      const start = this.#termStart[slot]!;
      const count = this.#termCount[slot]!;
      pool.set(this.#termPool.subarray(start, start + count), used);
      this.#termStart[slot] = used;
      used += count;
    }
    this.#termPool = pool;
    this.#poolUsed = used;
    this.#poolFreed = 0;
  }

  #term(found: string): number {
    let term = this.#wordTerms.get(found);
    if (term !== undefined) return term;
    const word = ownCopy(found);
    const token = bm25Token(word);
    term = this.#terms.get(token);
    if (term === undefined) {
      term = this.#postings.length;
      this.#terms.set(token === word ? word : ownCopy(token), term);
      this.#postings.push({ slots: new Int32Array(4), tfs: new Uint16Array(4), length: 0 });
      if (term === this.#termCounts.length) this.#termCounts = grown(this.#termCounts, new Uint32Array(term * 2));
    }
    this.#wordTerms.set(word, term);
    return term;
  }

  #newSlot(): number {
    const slot = this.#slotCount++;
    if (slot === this.#ids.length) {
      const capacity = grownCapacity(this.#ids.length);
      this.#ids = grown(this.#ids, new Float64Array(capacity));
      this.#lengths = grown(this.#lengths, new Uint32Array(capacity));
      this.#termStart = grown(this.#termStart, new Uint32Array(capacity));
      this.#termCount = grown(this.#termCount, new Uint32Array(capacity));
      this.#scores = new Float64Array(capacity);
      this.#touched = new Int32Array(capacity);
    }
    return slot;
  }
}

/**
 * A term's postings double while short and grow by a quarter from 1,024 (6 KB): most of the
 * postings' bytes are in the common terms' long lists, where doubling left on average a third
 * of each unused.
 */
function grownPostings(capacity: number): number {
  return capacity < 1024 ? capacity * 2 : capacity + Math.ceil(capacity / 4);
}

function grown<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
