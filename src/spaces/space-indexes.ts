import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { Bm25Index } from './bm25-index.ts';
import { hashedEmbedderVersion } from './hashed-embedder.ts';
import type { SpaceRow } from './space-rows.ts';
import type { SpaceStore } from './space-store.ts';
import type { VectorIndex, VectorIndexFactory } from './vector-index.ts';

/** Chunks read into a BM25 index per event-loop turn: about 20 ms of work (1 µs a word), what a request may wait behind. */
const TEXT_INDEX_SLICE = 200;
/**
 * Vectors added to a space's graph per event-loop turn, what a request may wait behind while a
 * graph builds: a vector of 384 dimensions took 0.27 ms of an idle core (built-in embedder's
 * vectors, to 100,000), 1.5 ms on cores loaded 10–15 deep, and 2.5–2.8 ms on synthetic clustered
 * vectors past 75,000, so 8 is 2–25 ms.
 */
const GRAPH_SLICE = 8;
/**
 * While writes keep coming to a space whose graph is too far behind to answer searches (the
 * exact scan answers them), its build waits until no write has come for this long. A vector
 * costs the graph ~0.75 ms of a core at a million (docs/BENCHMARKS.md) against ~0.1 ms to write
 * it, so building between a bulk ingest's writes cannot keep up; it only took the event loop
 * from the ingest: 1,000,000 chunks through HTTP went at ~1.3 MB/s, where writes alone go at ~4.
 * The graph is built once the ingest pauses. A graph that answers (4,096 or fewer vectors
 * behind) is kept up between writes as before.
 */
const GRAPH_WRITE_QUIET_MS = 250;

/** A chunk as the in-memory indexes take it: its row id, vector and text. */
export interface IndexedChunk {
  id: number;
  vector: Float32Array;
  text: string;
}

interface TextIndexFill {
  index: Bm25Index;
  /** Set once every chunk the space held is in: searches use the index from then on. */
  full: boolean;
  /** Settles when the fill ends (full, or dropped). */
  done: Promise<void>;
}

/**
 * The spaces' in-memory search indexes and their upkeep: a vector index and a BM25 index per
 * space searched so far, both derived from the store (which stays the truth) and kept up to date
 * by every write the library makes.
 */
export class SpaceIndexes {
  readonly #store: SpaceStore;
  readonly #factory: VectorIndexFactory;
  /** Vector indexes of the spaces searched so far, by space row id: derived from the store, filled on first dense search. */
  readonly #vectors = new Map<number, VectorIndex>();
  /**
   * BM25 indexes of the spaces searched so far, by space row id: derived from the store like the
   * vector indexes, filled in slices between other work from a space's first BM25 search on
   * (FTS5 answers until then). Writes update one while it fills too.
   */
  readonly #texts = new Map<number, TextIndexFill>();
  /** The running graph builds (a slice per turn), by space row id: never two for one space. */
  readonly #builds = new Map<number, Promise<void>>();
  /** When each space last had chunks added (performance.now()), for GRAPH_WRITE_QUIET_MS. */
  readonly #lastWrite = new Map<number, number>();
  /** Where graphs are saved (`<dataDir>/spaces/graphs`); null: never saved. */
  readonly #graphDir: string | null;
  readonly #graphWriteQuietMs: number;
  #closed = false;

  constructor(store: SpaceStore, factory: VectorIndexFactory, graphDir: string | null = null, graphWriteQuietMs = GRAPH_WRITE_QUIET_MS) {
    this.#store = store;
    this.#factory = factory;
    this.#graphDir = graphDir;
    this.#graphWriteQuietMs = graphWriteQuietMs;
  }

  /**
   * The space's vector index, filled from the store on first use, with its saved graph loaded
   * when there is one for the space's embedder; the graph's missing part is built in slices.
   */
  vectorIndex(row: SpaceRow): VectorIndex {
    let index = this.#vectors.get(row.id);
    if (index === undefined) {
      index = this.#factory(row.dimensions, {
        sparseQueries: hashedEmbedderVersion(row.embedder) !== undefined,
        storedVectors: (ids) => this.#store.vectorsOf(ids),
      });
      index.upsert(this.#store.vectors(row.id));
      const path = this.#graphPath(row);
      if (index.load === undefined) {
        // An index without a graph (the built-in embedder's spaces scan exactly since 2026-11-29): a graph saved before is dead weight.
        this.#deleteGraphs(row.id);
      } else if (path !== null) {
        try {
          index.load(path);
        } catch {
          // No file yet, or one usearch cannot read: the graph is built from the vectors instead.
        }
      }
      this.#vectors.set(row.id, index);
      this.#startGraphBuild(row);
    }
    return index;
  }

  /** Settles when the space's graph build ends (done, or dropped); undefined when none runs. */
  graphBuilt(spaceId: number): Promise<void> | undefined {
    return this.#builds.get(spaceId);
  }

  /** Saves the graphs that changed since their last save (the library is closing, or a caller asks). */
  saveGraphs(): void {
    for (const [spaceId, index] of this.#vectors) {
      if (index.dirty !== true) continue;
      const row = this.#store.spaceById(spaceId);
      if (row !== undefined) this.#saveGraph(row, index);
    }
  }

  /** The space's BM25 index once it is full; null while it fills (starting the fill on first call). */
  textIndex(row: SpaceRow): Bm25Index | null {
    let fill = this.#texts.get(row.id) ?? this.#startTextIndex(row.id);
    if (fill.full && !this.#textIndexCurrent(row, fill.index)) fill = this.#startTextIndex(row.id);
    return fill.full ? fill.index : null;
  }

  /** Settles when the space's BM25 fill ends (full, or dropped); undefined when none was started. */
  textIndexSettled(spaceId: number): Promise<void> | undefined {
    return this.#texts.get(spaceId)?.done;
  }

  /** New chunks of the space (just committed) go into whichever of its indexes exist. */
  upsert(spaceId: number, chunks: readonly IndexedChunk[]): void {
    this.#lastWrite.set(spaceId, performance.now());
    const index = this.#vectors.get(spaceId);
    if (index === undefined) {
      // The first write since the library opened fills the vector index (which reads the new
      // chunks from the store too), so the first search after an ingest finds it ready.
      const row = this.#store.spaceById(spaceId);
      if (row !== undefined && !this.#closed) this.vectorIndex(row);
    } else {
      index.upsert(chunks);
      this.#continueGraphBuild(spaceId);
    }
    this.#texts.get(spaceId)?.index.upsert(chunks);
  }

  /** Chunks removed from the space (just committed) leave its indexes. */
  remove(spaceId: number, ids: readonly number[]): void {
    this.#vectors.get(spaceId)?.remove(ids);
    this.#texts.get(spaceId)?.index.remove(ids);
  }

  /** A replaced document's chunks: the old ones leave each index before the new ones arrive. */
  replace(spaceId: number, removedIds: readonly number[], chunks: readonly IndexedChunk[]): void {
    this.#lastWrite.set(spaceId, performance.now());
    const index = this.#vectors.get(spaceId);
    if (index !== undefined) {
      index.remove(removedIds);
      index.upsert(chunks);
      this.#continueGraphBuild(spaceId);
    }
    const textIndex = this.#texts.get(spaceId)?.index;
    if (textIndex !== undefined) {
      textIndex.remove(removedIds);
      textIndex.upsert(chunks);
    }
  }

  /** Drops the space's vector index (a reindex swapped its vectors); the next dense search fills it again. */
  dropVectors(spaceId: number): void {
    this.#vectors.delete(spaceId);
    // The saved graph holds the old embedder's vectors: the next fill builds one from the new.
    this.#deleteGraphs(spaceId);
  }

  /** Drops both of the space's indexes and its saved graph (the space was deleted). */
  drop(spaceId: number): void {
    this.#vectors.delete(spaceId);
    this.#texts.delete(spaceId);
    this.#deleteGraphs(spaceId);
  }

  /** Drops every index (another process wrote the store: they may be stale). */
  clear(): void {
    this.#vectors.clear();
    this.#texts.clear();
  }

  /** Drops every index and stops the fills for good (the library is closing). */
  close(): void {
    this.#closed = true;
    try {
      this.saveGraphs();
    } catch {
      // A graph that cannot be written is built again next time; closing goes on.
    }
    this.clear();
  }

  /**
   * Where the space's graph is saved: named by the space and a hash of its embedder and
   * dimensions, so a graph of another embedder's vectors is never loaded for it.
   */
  #graphPath(row: SpaceRow): string | null {
    if (this.#graphDir === null) return null;
    const embedder = createHash('sha256').update(`${row.embedder}\n${row.dimensions}`).digest('hex').slice(0, 16);
    return join(this.#graphDir, `space-${row.id}-${embedder}.usearch`);
  }

  #saveGraph(row: SpaceRow, index: VectorIndex): void {
    const path = this.#graphPath(row);
    if (path === null || index.save === undefined) return;
    mkdirSync(this.#graphDir!, { recursive: true, mode: 0o700 });
    // Written aside and renamed, so a crash mid-write leaves the last whole graph (or none).
    const partial = `${path}.partial`;
    if (index.save(partial)) {
      // The graph holds the user's vectors: private, like spaces.db.
      chmodSync(partial, 0o600);
      renameSync(partial, path);
    }
    // Graphs of the space's earlier embedders.
    this.#deleteGraphs(row.id, path);
  }

  #deleteGraphs(spaceId: number, keep?: string): void {
    if (this.#graphDir === null) return;
    let names: string[];
    try {
      names = readdirSync(this.#graphDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(`space-${spaceId}-`) && join(this.#graphDir, name) !== keep) rmSync(join(this.#graphDir, name), { force: true });
    }
  }

  #startGraphBuild(row: SpaceRow): void {
    const index = this.#vectors.get(row.id);
    if (index?.buildSome === undefined || this.#builds.has(row.id)) return;
    let finished = false;
    const done = this.#buildGraph(row.id, index).then(() => {
      finished = true;
    }, () => {
      // The exact scan goes on answering; the next write or fill starts the build again.
    }).finally(() => {
      if (this.#builds.get(row.id) === done) this.#builds.delete(row.id);
      // A write between the last slice and here found this build still running and left its vectors to it.
      if (finished && !this.#closed && this.#vectors.get(row.id) === index && index.buildSome!(0) > 0) this.#startGraphBuild(row);
    });
    this.#builds.set(row.id, done);
  }

  #continueGraphBuild(spaceId: number): void {
    if (this.#builds.has(spaceId)) return;
    const row = this.#store.spaceById(spaceId);
    if (row !== undefined) this.#startGraphBuild(row);
  }

  /**
   * Adds the index's pending vectors to its graph a slice per event-loop turn, then saves the
   * graph once it holds them all. Stops when the index is dropped or the library closes.
   */
  async #buildGraph(spaceId: number, index: VectorIndex): Promise<void> {
    for (;;) {
      await yieldToEventLoop();
      if (this.#closed || this.#vectors.get(spaceId) !== index) return;
      const quietFor = performance.now() - (this.#lastWrite.get(spaceId) ?? Number.NEGATIVE_INFINITY);
      if (quietFor < this.#graphWriteQuietMs && index.approximate === false && index.buildSome!(0) > 0) {
        await sleep(this.#graphWriteQuietMs - quietFor, undefined, { ref: false });
        continue;
      }
      if (index.buildSome!(GRAPH_SLICE) === 0) break;
    }
    if (index.dirty === true) {
      const row = this.#store.spaceById(spaceId);
      if (row !== undefined) this.#saveGraph(row, index);
    }
  }

  /**
   * Whether the index holds what the store does, as far as a write could have changed it: an
   * add makes a chunk newer than any the index has, a delete alone lowers the count. Every
   * write path updates the index; this only makes one that forgot cost a refill, never a
   * passage missing from BM25.
   */
  #textIndexCurrent(row: SpaceRow, index: Bm25Index): boolean {
    if (index.size !== row.chunk_count) return false;
    const newest = this.#store.newestChunkId(row.id);
    return newest === null || index.has(newest);
  }

  #startTextIndex(spaceId: number): TextIndexFill {
    const fill: TextIndexFill = { index: new Bm25Index(), full: false, done: Promise.resolve() };
    this.#texts.set(spaceId, fill);
    fill.done = this.#fillTextIndex(spaceId, fill).catch(() => {
      // FTS5 goes on answering (it is the truth the index is read from); the next search tries again.
      if (this.#texts.get(spaceId) === fill) this.#texts.delete(spaceId);
    });
    return fill;
  }

  /**
   * Reads the space's chunks into the index in row id order, a slice per event-loop turn, so a
   * big space never holds up other requests for long. Writes meanwhile go to the index as
   * well: a new chunk has a higher id than any read so far (upsert replaces it when the read
   * reaches it), a removed one is either out already or never read. Stops when the index is
   * dropped (space deleted, another process wrote the store, library closed).
   */
  async #fillTextIndex(spaceId: number, fill: TextIndexFill): Promise<void> {
    for (let after = 0; ;) {
      await yieldToEventLoop();
      if (this.#closed || this.#texts.get(spaceId) !== fill) return;
      const batch = this.#store.chunksAfter(spaceId, after, TEXT_INDEX_SLICE);
      if (batch.length === 0) {
        fill.full = true;
        return;
      }
      fill.index.upsert(batch);
      after = batch[batch.length - 1]!.id;
    }
  }
}
