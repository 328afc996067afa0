import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { quoteInput } from '../shared/quote-input.ts';
import { HashedEmbedder, hashedEmbedderVersion } from './hashed-embedder.ts';
import { reindexRequired, spaceConflict } from './space-errors.ts';
import type { SpaceRow } from './space-rows.ts';
import type { Embedder } from './space-types.ts';

/** Chunks embedded per embedder call: big enough for a model's batching, small enough to yield to searches between calls. */
export const EMBED_BATCH = 128;

/**
 * The space library's embedder, and which embedder a space's vectors need: a space keeps the
 * embedder that made its vectors until a reindex moves it to the library's.
 */
export class SpaceEmbedders {
  /** The embedder new spaces and new documents use, and what reindex moves a space to. */
  readonly current: Embedder;
  /** Earlier versions of the built-in embedder, by id, made when a space that recorded one is used. */
  readonly #builtinVersions = new Map<string, HashedEmbedder>();

  constructor(embedder: Embedder) {
    this.current = embedder;
  }

  /** Whether the space's vectors are the library's embedder's: new spaces' embedder, what reindex moves a space to. */
  isCurrent(row: SpaceRow): boolean {
    return row.embedder === this.current.id && row.dimensions === this.current.dimensions;
  }

  /**
   * The embedder that made the space's vectors, when this library can embed with it: its own
   * embedder, or, while that is the built-in one, any version of the built-in (no weights to
   * find), so a space made with `svc-hashed-embed-v1` keeps searching and ingesting with v1
   * vectors until a reindex moves it. Null otherwise: the space needs a reindex.
   */
  embedderFor(row: SpaceRow): Embedder | null {
    if (this.isCurrent(row)) return this.current;
    const version = hashedEmbedderVersion(row.embedder);
    if (!(this.current instanceof HashedEmbedder) || version === undefined) return null;
    const key = `${row.embedder}/${row.dimensions}`;
    let embedder = this.#builtinVersions.get(key);
    if (embedder === undefined) {
      embedder = new HashedEmbedder({ version, dimensions: row.dimensions });
      this.#builtinVersions.set(key, embedder);
    }
    return embedder;
  }

  needsReindex(row: SpaceRow): boolean {
    return this.embedderFor(row) === null;
  }

  require(row: SpaceRow): Embedder {
    const embedder = this.embedderFor(row);
    if (embedder === null) {
      throw reindexRequired(`Space ${quoteInput(row.name)} holds vectors of ${quoteInput(row.embedder)} (${row.dimensions} dimensions), not of ${quoteInput(this.current.id)}: reindex it first (BM25 search still works).`);
    }
    return embedder;
  }

  /** Inside a write: the space still holds vectors of the embedder that made the new ones (a reindex may have swapped them since). */
  requireSame(row: SpaceRow, embedder: Embedder): void {
    if (row.embedder !== embedder.id || row.dimensions !== embedder.dimensions) {
      throw spaceConflict(`Space ${quoteInput(row.name)} was reindexed to ${quoteInput(row.embedder)} while this text was embedded with ${quoteInput(embedder.id)}; send it again.`, 'reindex_required', 'space');
    }
  }
}

/** Embeds document texts EMBED_BATCH at a time, checking each batch's vectors. */
export async function embedInBatches(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += EMBED_BATCH) {
    // The built-in embedder never waits on anything, so its promise alone would not let
    // requests in between batches: give the event loop a turn.
    if (start > 0) await yieldToEventLoop();
    const batch = texts.slice(start, start + EMBED_BATCH);
    const batchVectors = await embedder.embed(batch, 'document');
    if (batchVectors.length !== batch.length || batchVectors.some((vector) => vector.length !== embedder.dimensions)) {
      throw new Error(`embedder ${embedder.id} returned ${batchVectors.length} vectors for ${batch.length} texts, or vectors not of ${embedder.dimensions}`);
    }
    vectors.push(...batchVectors);
  }
  return vectors;
}
