/**
 * The dense half of a space's search. The space store (SQLite) keeps every vector as the truth;
 * a VectorIndex is derived state in memory, filled from the store when a space opens and updated
 * after each committed transaction. Search results are always looked up in the store by id
 * afterwards, so an entry the index still holds for a deleted chunk can never surface its text.
 */
export interface VectorHit {
  id: number;
  /** Cosine similarity (vectors are unit length, so the dot product), larger is nearer. */
  similarity: number;
}

export interface VectorIndex {
  readonly dimensions: number;
  readonly size: number;
  /** Adds or replaces vectors by id (a chunk's row id). Each vector has `dimensions` entries, unit length. */
  upsert(entries: Iterable<{ id: number; vector: Float32Array }>): void;
  remove(ids: Iterable<number>): void;
  /**
   * The `k` nearest, best first; `accept` (document and metadata filters) drops ids before they
   * count. `alsoConsider`: ids another ranking of the same query found (hybrid search passes its
   * BM25 list); an approximate index rescores them beside its own candidates, so a near passage
   * its walk missed still makes the list. They are a hint: an exact index ignores them, and ids
   * it does not hold are skipped.
   */
  search(query: Float32Array, k: number, accept?: (id: number) => boolean, alsoConsider?: readonly number[]): VectorHit[];
  /**
   * An index that builds a structure over time (hnsw-vector-index.ts): adds up to `count` more
   * vectors to it and returns how many still wait. space-indexes.ts calls it a batch per
   * event-loop turn until 0. Exact indexes leave it out.
   */
  buildSome?(count: number): number;
  /** Writes that structure to `path` (false: none to write). */
  save?(path: string): boolean;
  /** Reads a structure `save` wrote for the same vectors (false: unreadable; the index builds one instead). */
  load?(path: string): boolean;
  /** Whether the structure changed since it was saved or loaded. */
  readonly dirty?: boolean;
  /** Whether searches use the structure now (false: it is missing or too far behind, an exact scan answers). */
  readonly approximate?: boolean;
}

/** The float vectors of `ids` as the store keeps them, in order; undefined for an id it no longer holds. */
export type StoredVectors = (ids: readonly number[]) => (Float32Array | undefined)[];

/** What a space's index may rely on about its queries and vectors. */
export interface VectorIndexTraits {
  /**
   * Query vectors have few nonzero components: the built-in embedder's (hashed features of a
   * short text: 52–116 of 384 on questions, p10–p90), not a model's (every component nonzero).
   */
  sparseQueries: boolean;
  /** Reads vectors back from the space's store: an index may rescore from them instead of keeping its own fine copy. */
  storedVectors?: StoredVectors;
}

export type VectorIndexFactory = (dimensions: number, traits?: VectorIndexTraits) => VectorIndex;
