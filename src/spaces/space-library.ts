import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { stemmer } from 'stemmer';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { Bm25Index } from './bm25-index.ts';
import { bm25Expression, queryTerms, selectiveTerms } from './bm25-query.ts';
import { HashedEmbedder, hashedEmbedderVersion } from './hashed-embedder.ts';
import { fuseRanks } from './rank-fusion.ts';
import { markedSnippet } from './search-snippet.ts';
import { metadataValueKey, parseDocumentInput, parsePage, parseSearchRequest, type ParsedDocumentInput, type ParsedSearchRequest } from './space-input.ts';
import { parseSpaceName, spaceNameKey } from './space-name.ts';
import type { ChunkRow, ChunkWrite, DocumentRow, DocumentWrite, NewDocument, SpaceRow } from './space-rows.ts';
import { SpaceStore } from './space-store.ts';
import type { AddDocumentResult, ChunkRecord, DocumentInput, DocumentRecord, Embedder, SearchRequest, SearchResult, SpaceLibrary, SpaceRecord } from './space-types.ts';
import { type VectorIndex, type VectorIndexFactory } from './vector-index.ts';
import { defaultVectorIndex } from './int8-vector-index.ts';
import { alphanumericPieces, foldedWords } from './word-tokens.ts';

export interface SpaceLibraryOptions {
  /** The svc data dir: the spaces live in `<dataDir>/spaces/spaces.db`. */
  dataDir: string;
  /** The embedder new spaces and new documents use; the built-in HashedEmbedder unless told. */
  embedder?: Embedder;
  /** The in-memory nearest-neighbour index per space; exact search unless told. */
  vectorIndex?: VectorIndexFactory;
}

/** Chunks embedded per embedder call: big enough for a model's batching, small enough to yield to searches between calls. */
const EMBED_BATCH = 128;
/** Chunks read into a BM25 index per event-loop turn: about 20 ms of work (1 µs a word), what a request may wait behind. */
const TEXT_INDEX_SLICE = 200;
/**
 * The in-memory BM25 index adds a posting in a few ns where FTS5 scored a row in 1–2 µs, so it
 * affords 10 times FTS5's row budget (bm25-query.ts): common words stay in the query unless
 * they would add more than twice the space's chunk count.
 */
const INDEX_ROW_BUDGET = (chunks: number) => Math.max(2 * chunks, 5_000);
/**
 * addDocuments closes a write transaction once it holds this many chunks. Each commit costs
 * about as much as writing a few small documents (FTS5 flushes a segment, every page the
 * word statistics touched goes to the WAL), so small documents go in groups; beyond a few
 * hundred chunks a larger group gains little and would hold the event loop longer.
 */
const WRITE_BATCH_CHUNKS = 256;
/** How many of each list hybrid search fuses: deep enough that a passage ranked well by one list alone still surfaces. */
const HYBRID_DEPTH = 50;

/** Opens the knowledge spaces in `dataDir` (creating the store on first use). */
export async function openSpaceLibrary(options: SpaceLibraryOptions): Promise<SpaceLibrary> {
  const store = SpaceStore.open(join(options.dataDir, 'spaces', 'spaces.db'));
  return new LocalSpaceLibrary(store, options.embedder ?? new HashedEmbedder(), options.vectorIndex ?? defaultVectorIndex);
}

/**
 * The knowledge-space library over one SQLite store. Writes follow one pattern: validate,
 * embed (the only await), then check again and write in ONE synchronous transaction, then
 * update the in-memory vector index. Nothing is awaited between BEGIN and COMMIT, so a search
 * (which is synchronous once its query vector is made) sees a document wholly or not at all,
 * and the checks before the await are repeated inside the transaction because anything may
 * have happened while embedding (the space deleted or reindexed, the same text added).
 */
class LocalSpaceLibrary implements SpaceLibrary {
  readonly #store: SpaceStore;
  readonly #embedder: Embedder;
  readonly #indexFactory: VectorIndexFactory;
  /** Vector indexes of the spaces searched so far, by space row id: derived from the store, filled on first dense search. */
  readonly #indexes = new Map<number, VectorIndex>();
  /**
   * BM25 indexes of the spaces searched so far, by space row id: derived from the store like the
   * vector indexes, filled in slices between other work from a space's first BM25 search on
   * (FTS5 answers until then). Writes update one while it fills too.
   */
  readonly #textIndexes = new Map<number, TextIndexFill>();
  /** Earlier versions of the built-in embedder, by id, made when a space that recorded one is used. */
  readonly #builtinVersions = new Map<string, HashedEmbedder>();
  #dataVersion: number;
  #closed = false;

  constructor(store: SpaceStore, embedder: Embedder, indexFactory: VectorIndexFactory) {
    this.#store = store;
    this.#embedder = embedder;
    this.#indexFactory = indexFactory;
    this.#dataVersion = store.dataVersion();
  }

  async createSpace(name: string): Promise<SpaceRecord> {
    this.#open();
    const valid = parseSpaceName(name);
    const now = new Date().toISOString();
    const row = this.#store.transaction(() => this.#store.insertSpace(valid, spaceNameKey(valid), this.#embedder.id, this.#embedder.dimensions, now));
    if (row === null) throw conflict(`A space named ${quoteInput(valid)} already exists (names are unique regardless of case).`, 'space_exists', 'name');
    return this.#spaceRecord(row);
  }

  async listSpaces(): Promise<SpaceRecord[]> {
    this.#open();
    return this.#store.listSpaces().map((row) => this.#spaceRecord(row));
  }

  async getSpace(name: string): Promise<SpaceRecord> {
    this.#open();
    return this.#spaceRecord(this.#space(name));
  }

  async deleteSpace(name: string): Promise<void> {
    this.#open();
    const row = this.#space(name);
    this.#store.transaction(() => this.#store.deleteSpace(row.id));
    this.#indexes.delete(row.id);
    this.#textIndexes.delete(row.id);
  }

  async addDocument(space: string, input: DocumentInput): Promise<{ document: DocumentRecord; created: boolean }> {
    const [result] = await this.addDocuments(space, [input]);
    if (!result!.ok) throw result!.error;
    return { document: result!.document, created: result!.created };
  }

  async addDocuments(space: string, inputs: readonly DocumentInput[], onResult?: (index: number, result: AddDocumentResult) => void): Promise<AddDocumentResult[]> {
    this.#open();
    const row = this.#space(space);
    const embedder = this.#requireEmbedder(row);
    const results: AddDocumentResult[] = [];
    const settle = (index: number, result: AddDocumentResult) => {
      results[index] = result;
      onResult?.(index, result);
    };
    // The same text twice in one call is written once; the later inputs get the first's outcome.
    const firstOfText = new Map<string, number>();
    const repeats: { index: number; first: number }[] = [];
    let group: PendingDocument[] = [];
    let groupChunks = 0;
    for (const [index, input] of inputs.entries()) {
      let parsed: ParsedDocumentInput;
      try {
        parsed = parseDocumentInput(input);
      } catch (error) {
        settle(index, { ok: false, error });
        continue;
      }
      const contentHash = sha256(parsed.text);
      const first = firstOfText.get(contentHash);
      if (first !== undefined) {
        repeats.push({ index, first });
        continue;
      }
      firstOfText.set(contentHash, index);
      const existing = this.#store.documentByHash(row.id, contentHash);
      if (existing !== undefined) {
        settle(index, { ok: true, document: documentRecord(existing, row.name), created: false });
        continue;
      }
      group.push({ index, parsed, contentHash });
      groupChunks += parsed.chunks.length;
      if (groupChunks >= WRITE_BATCH_CHUNKS) {
        await this.#addGroup(row, embedder, group, settle);
        group = [];
        groupChunks = 0;
      }
    }
    if (group.length > 0) await this.#addGroup(row, embedder, group, settle);
    for (const { index, first } of repeats) {
      const result = results[first]!;
      settle(index, result.ok ? { ok: true, document: result.document, created: false } : result);
    }
    return results;
  }

  /**
   * Embeds a group of new documents, then writes them in one transaction. A group the store
   * refuses is written again one document per transaction, so only the document at fault fails.
   */
  async #addGroup(row: SpaceRow, embedder: Embedder, group: readonly PendingDocument[], settle: (index: number, result: AddDocumentResult) => void): Promise<void> {
    let documents: GroupDocument[];
    try {
      const vectors = await this.#embed(embedder, group.flatMap((pending) => pending.parsed.chunks.map((chunk) => chunk.text)));
      this.#open();
      let next = 0;
      documents = group.map(({ index, parsed, contentHash }) => ({
        index,
        contentHash,
        publicId: newId('doc_'),
        document: documentWrite(parsed, contentHash),
        chunks: parsed.chunks.map((chunk) => ({ ...chunk, publicId: newId('chunk_', 20), vector: vectors[next++]! })),
      }));
    } catch (error) {
      for (const { index } of group) settle(index, { ok: false, error });
      return;
    }
    // Anything may have happened while embedding: the same text may have arrived since.
    const write = (batch: readonly GroupDocument[]) => this.#store.transaction(() => {
      const current = this.#currentSpace(row);
      this.#requireSameEmbedder(current, embedder);
      const raced = batch.map((document) => this.#store.documentByHash(current.id, document.contentHash));
      const fresh = batch.filter((_, i) => raced[i] === undefined);
      const inserted = this.#store.insertDocuments(current, fresh, new Date().toISOString());
      return batch.map((document, i) => ({ document, raced: raced[i], inserted: inserted[fresh.indexOf(document)] }));
    });
    let written: ReturnType<typeof write>;
    try {
      written = write(documents);
    } catch (error) {
      if (documents.length === 1) {
        settle(documents[0]!.index, { ok: false, error });
        return;
      }
      written = [];
      for (const document of documents) {
        try {
          written.push(...write([document]));
        } catch (alone) {
          settle(document.index, { ok: false, error: alone });
        }
      }
    }
    this.#indexes.get(row.id)?.upsert(written.flatMap(({ document, inserted }) => inserted?.chunkIds.map((id, j) => ({ id, vector: document.chunks[j]!.vector })) ?? []));
    this.#textIndexes.get(row.id)?.index.upsert(written.flatMap(({ document, inserted }) => inserted?.chunkIds.map((id, j) => ({ id, text: document.chunks[j]!.text })) ?? []));
    for (const { document, raced, inserted } of written) {
      settle(document.index, inserted === undefined
        ? { ok: true, document: documentRecord(raced!, row.name), created: false }
        : { ok: true, document: documentRecord(inserted.row, row.name), created: true });
    }
  }

  async replaceDocument(space: string, documentId: string, input: DocumentInput): Promise<DocumentRecord> {
    this.#open();
    const parsed = parseDocumentInput(input);
    const row = this.#space(space);
    const embedder = this.#requireEmbedder(row);
    this.#document(row, documentId);
    const contentHash = sha256(parsed.text);
    this.#requireUniqueText(row, documentId, contentHash);

    const chunks = await this.#embedChunks(embedder, parsed);
    this.#open();
    const now = new Date().toISOString();
    const outcome = this.#store.transaction(() => {
      const current = this.#currentSpace(row);
      this.#requireSameEmbedder(current, embedder);
      const old = this.#document(current, documentId);
      this.#requireUniqueText(current, documentId, contentHash);
      return this.#store.replaceDocument(current, old, documentWrite(parsed, contentHash), chunks, now);
    });
    const index = this.#indexes.get(row.id);
    if (index !== undefined) {
      index.remove(outcome.removedIds);
      index.upsert(outcome.chunkIds.map((id, i) => ({ id, vector: chunks[i]!.vector })));
    }
    const textIndex = this.#textIndexes.get(row.id)?.index;
    if (textIndex !== undefined) {
      textIndex.remove(outcome.removedIds);
      textIndex.upsert(outcome.chunkIds.map((id, i) => ({ id, text: chunks[i]!.text })));
    }
    return documentRecord(outcome.row, row.name);
  }

  async deleteDocument(space: string, documentId: string): Promise<void> {
    this.#open();
    const row = this.#space(space);
    const now = new Date().toISOString();
    const removed = this.#store.transaction(() => this.#store.deleteDocument(row, this.#document(row, documentId), now));
    this.#indexes.get(row.id)?.remove(removed);
    this.#textIndexes.get(row.id)?.index.remove(removed);
  }

  async listDocuments(space: string, page?: { limit?: number; after?: string }): Promise<{ documents: DocumentRecord[]; next: string | null }> {
    this.#open();
    const { limit, after } = parsePage(page);
    const row = this.#space(space);
    let afterId = 0;
    if (after !== null) {
      const cursor = this.#store.documentByPublicId(row.id, after);
      if (cursor === undefined) throw ApiError.invalidRequest(`No document ${quoteInput(after)} in space ${quoteInput(row.name)} to list after.`, 'after', 'invalid_cursor');
      afterId = cursor.id;
    }
    const rows = this.#store.listDocuments(row.id, afterId, limit + 1);
    const documents = rows.slice(0, limit).map((document) => documentRecord(document, row.name));
    return { documents, next: rows.length > limit ? documents[documents.length - 1]!.id : null };
  }

  async getDocument(space: string, documentId: string, options: { includeText?: boolean } = {}): Promise<DocumentRecord & { text?: string }> {
    this.#open();
    const row = this.#space(space);
    const document = this.#document(row, documentId);
    const record = documentRecord(document, row.name);
    return options.includeText === true ? { ...record, text: this.#store.documentText(document.id) } : record;
  }

  async listChunks(space: string, documentId: string, page?: { limit?: number; after?: string }): Promise<{ chunks: ChunkRecord[]; next: string | null }> {
    this.#open();
    const { limit, after } = parsePage(page);
    const row = this.#space(space);
    const document = this.#document(row, documentId);
    let afterPosition = -1;
    if (after !== null) {
      const position = this.#store.chunkPosition(document.id, after);
      if (position === undefined) throw ApiError.invalidRequest(`No chunk ${quoteInput(after)} in document ${quoteInput(document.public_id)} to list after.`, 'after', 'invalid_cursor');
      afterPosition = position;
    }
    // One row more than the page tells whether there is a next page without counting.
    const rows = this.#store.documentChunks(document.id, afterPosition, limit + 1);
    const chunks = rows.slice(0, limit).map((c): ChunkRecord => ({ id: c.public_id, position: c.position, page: c.page, heading_path: JSON.parse(c.heading_path) as string[], text: c.text }));
    return { chunks, next: rows.length > limit ? chunks[chunks.length - 1]!.id : null };
  }

  async search(space: string, request: SearchRequest): Promise<SearchResult[]> {
    this.#open();
    const parsed = parseSearchRequest(request);
    const row = this.#space(space);
    if (parsed.mode !== 'bm25') this.#requireEmbedder(row);
    const modelVector = await this.#modelQueryVector(parsed);
    this.#open();
    const current = this.#currentSpace(row);
    const lists = this.#rankSpace(current, parsed, modelVector);
    return this.#fuseAndRead(lists, new Map([[current.id, current]]), parsed);
  }

  async searchAll(request: SearchRequest & { spaces?: string[] }): Promise<SearchResult[]> {
    this.#open();
    const parsed = parseSearchRequest(request);
    const rows = parsed.spaces === null ? this.#store.listSpaces() : uniqueById(parsed.spaces.map((name) => this.#space(name)));
    if (parsed.mode !== 'bm25') {
      const stale = rows.filter((row) => this.#needsReindex(row));
      if (stale.length > 0) {
        throw reindexRequired(`${stale.length === 1 ? 'Space' : 'Spaces'} ${stale.map((row) => quoteInput(row.name)).join(', ')} ${stale.length === 1 ? 'holds' : 'hold'} vectors of another embedder than ${quoteInput(this.#embedder.id)}: reindex, or search with mode "bm25".`);
      }
    }
    const modelVector = await this.#modelQueryVector(parsed);
    this.#open();
    // One BM25 list and one dense list over all the spaces, then fused like one space's. Dense
    // similarities compare across spaces (one embedder made every vector, or versions of the
    // built-in one, all cosines of unit vectors: stale spaces were refused above); BM25 scores use each space's own statistics, close enough to merge.
    // Fusing each space's own ranks instead would put every space's best hit near the top,
    // however poor it is.
    const spaces = new Map<number, SpaceRow>();
    const merged: RankedLists = { bm25: parsed.mode === 'dense' ? null : [], dense: parsed.mode === 'bm25' ? null : [] };
    for (const row of rows) {
      const current = this.#store.spaceById(row.id);
      // A space deleted while the query was embedded has nothing left to find.
      if (current === undefined) continue;
      spaces.set(current.id, current);
      const lists = this.#rankSpace(current, parsed, modelVector);
      const tag = (item: Ranked) => ({ ...item, space: current.id });
      merged.bm25?.push(...lists.bm25!.map(tag));
      merged.dense?.push(...lists.dense!.map(tag));
    }
    const depth = searchDepth(parsed);
    // Chunk row ids are unique across spaces, so ties keep a stable order by id.
    const best = (list: Ranked[] | null) => list?.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, depth) ?? null;
    return this.#fuseAndRead({ bm25: best(merged.bm25), dense: best(merged.dense) }, spaces, parsed);
  }

  async warmUp(space: string): Promise<void> {
    this.#open();
    const row = this.#space(space);
    if (!this.#needsReindex(row)) this.#index(row);
    this.#textIndex(row);
    await this.#textIndexes.get(row.id)?.done;
  }

  async reindex(space: string, onProgress?: (done: number, total: number) => void): Promise<SpaceRecord> {
    this.#open();
    const row = this.#space(space);
    if (this.#isCurrent(row)) return this.#spaceRecord(row);
    // New vectors go to a side table batch by batch and replace the old ones in one transaction,
    // so searches never see two embedders' vectors in one space, and a crash loses only progress.
    this.#store.transaction(() => this.#store.clearReindexVectors(row.id));
    const total = row.chunk_count;
    let done = 0;
    let after = 0;
    for (;;) {
      const current = this.#currentSpace(row);
      if (this.#isCurrent(current)) return this.#spaceRecord(current);
      // One pass in row id order, then whatever is still without a vector (nothing, unless the
      // space changed while embedding): the swap happens only when that finds none.
      let batch = this.#store.chunksAfter(row.id, after, EMBED_BATCH);
      if (batch.length === 0) batch = this.#store.chunksWithoutReindexVector(row.id, EMBED_BATCH);
      else after = batch[batch.length - 1]!.id;
      if (batch.length === 0) {
        // No await between this check and the swap: every chunk has its new vector.
        const now = new Date().toISOString();
        this.#store.transaction(() => this.#store.swapReindexVectors(row.id, this.#embedder.id, this.#embedder.dimensions, now));
        this.#indexes.delete(row.id);
        return this.#spaceRecord(this.#currentSpace(row));
      }
      const vectors = await this.#embed(this.#embedder, batch.map((chunk) => chunk.text));
      this.#open();
      this.#store.transaction(() => {
        this.#currentSpace(row);
        this.#store.putReindexVectors(row.id, batch.map((chunk, i) => ({ id: chunk.id, vector: vectors[i]! })));
      });
      done += batch.length;
      onProgress?.(Math.min(done, total), Math.max(done, total));
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#indexes.clear();
    this.#textIndexes.clear();
    await this.#store.close();
  }

  // --- search ---

  /** The query vector from a model embedder (the same for every space); null for the built-in one, which weighs words by each space's idf. */
  async #modelQueryVector(request: ParsedSearchRequest): Promise<Float32Array | null> {
    if (request.mode === 'bm25' || this.#embedder instanceof HashedEmbedder) return null;
    const [vector] = await this.#embedder.embed([request.query], 'query');
    if (vector === undefined || vector.length !== this.#embedder.dimensions) throw new Error(`embedder ${this.#embedder.id} returned no vector of ${this.#embedder.dimensions} for the query`);
    return vector;
  }

  /** A space's BM25 and dense lists (null: not in this mode), best first; synchronous, so one state of the store. */
  #rankSpace(row: SpaceRow, request: ParsedSearchRequest, modelVector: Float32Array | null): RankedLists {
    const { mode } = request;
    if (mode !== 'bm25') this.#requireEmbedder(row);
    const lists: RankedLists = { bm25: mode === 'dense' ? null : [], dense: mode === 'bm25' ? null : [] };
    let documentIds: number[] | null = null;
    if (request.documentIds !== null || request.metadata.length > 0) {
      documentIds = this.#store.filterDocuments(row.id, request.documentIds, request.metadata.map(([key, value]) => [key, metadataValueKey(value)]));
      if (documentIds.length === 0) return lists;
    }
    const depth = searchDepth(request);
    // The built-in embedder weighs a code's runs too ("kz35" → "kz", "35").
    const words = [...new Set(foldedWords(request.query).flatMap((word) => [word, ...alphanumericPieces(word)]))];
    const frequencies = this.#store.documentFrequencies(row.id, words);
    const frequency = (word: string) => frequencies.get(word) ?? 0;
    const textIndex = lists.bm25 === null ? null : this.#textIndex(row);
    // The in-memory indexes filter by chunk id; FTS5 joins the documents itself.
    const accept = documentIds === null || (textIndex === null && lists.dense === null) ? undefined : membership(this.#store.chunkIdsOfDocuments(documentIds));
    if (lists.bm25 !== null) {
      const terms = queryTerms(request.query);
      if (textIndex !== null) {
        lists.bm25 = textIndex.search(selectiveTerms(terms, frequency, row.chunk_count, INDEX_ROW_BUDGET), depth, accept);
      } else {
        const expression = bm25Expression(selectiveTerms(terms, frequency, row.chunk_count));
        if (expression !== null) lists.bm25 = this.#store.bm25(row.id, expression, depth, documentIds);
      }
    }
    if (lists.dense !== null) {
      const vector = modelVector ?? this.#hashedQueryVector(row, request.query, frequency);
      // A query without a single word has no direction: nothing is near it.
      if (vector.some((value) => value !== 0)) {
        lists.dense = this.#index(row).search(vector, depth, accept).map((hit) => ({ id: hit.id, score: hit.similarity }));
      }
    }
    return lists;
  }

  /**
   * Reciprocal rank fusion of the lists, then the winners read from the store by row id: a
   * chunk replaced or deleted since an index saw it is simply not there, so its old text can
   * never come back (the next candidates take its place).
   */
  #fuseAndRead(lists: RankedLists, spaces: ReadonlyMap<number, SpaceRow>, request: ParsedSearchRequest): SearchResult[] {
    const inputs = [lists.bm25, lists.dense].filter((list) => list !== null);
    const fused = fuseRanks(inputs.map((list) => list.map((item) => item.id)));
    const bm25At = lists.bm25 === null ? -1 : 0;
    const denseAt = lists.dense === null ? -1 : inputs.length - 1;
    const spaceOf = new Map<number, SpaceRow>();
    for (const list of inputs) for (const item of list) if (item.space !== undefined) spaceOf.set(item.id, spaces.get(item.space)!);
    const terms = queryTerms(request.query);
    const results: SearchResult[] = [];
    const topK = request.top_k;
    for (let from = 0; from < fused.length && results.length < topK; from += topK) {
      const candidates = fused.slice(from, from + topK);
      const rows = new Map<number, { chunk: ChunkRow; space: SpaceRow }>();
      for (const space of spaces.values()) {
        const ids = candidates.map((item) => item.key).filter((id) => (spaceOf.get(id) ?? space) === space);
        for (const chunk of this.#store.chunksByIds(space.id, ids)) rows.set(chunk.id, { chunk, space });
      }
      for (const item of candidates) {
        const found = rows.get(item.key);
        if (found === undefined || results.length === topK) continue;
        const bm25Rank = bm25At < 0 ? null : item.ranks[bm25At]!;
        const denseRank = denseAt < 0 ? null : item.ranks[denseAt]!;
        results.push(searchResult(found.space.name, found.chunk, terms, item.score, bm25Rank, denseRank));
      }
    }
    return results;
  }

  /** The built-in embedder's query vector (the version the space records), each word weighed by its idf in this space (hashed-embedder.ts says why). */
  #hashedQueryVector(row: SpaceRow, query: string, frequency: (word: string) => number): Float32Array {
    const embedder = this.#requireEmbedder(row) as HashedEmbedder;
    return embedder.embedText(query, (word) => embedder.queryWordWeight(word, frequency(word), row.chunk_count));
  }

  #index(row: SpaceRow): VectorIndex {
    let index = this.#indexes.get(row.id);
    if (index === undefined) {
      index = this.#indexFactory(row.dimensions);
      index.upsert(this.#store.vectors(row.id));
      this.#indexes.set(row.id, index);
    }
    return index;
  }

  /** The space's BM25 index once it is full; null while it fills (starting the fill on first call). */
  #textIndex(row: SpaceRow): Bm25Index | null {
    let fill = this.#textIndexes.get(row.id) ?? this.#startTextIndex(row.id);
    if (fill.full && !this.#textIndexCurrent(row, fill.index)) fill = this.#startTextIndex(row.id);
    return fill.full ? fill.index : null;
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
    this.#textIndexes.set(spaceId, fill);
    fill.done = this.#fillTextIndex(spaceId, fill).catch(() => {
      // FTS5 goes on answering (it is the truth the index is read from); the next search tries again.
      if (this.#textIndexes.get(spaceId) === fill) this.#textIndexes.delete(spaceId);
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
      if (this.#closed || this.#textIndexes.get(spaceId) !== fill) return;
      const batch = this.#store.chunksAfter(spaceId, after, TEXT_INDEX_SLICE);
      if (batch.length === 0) {
        fill.full = true;
        return;
      }
      fill.index.upsert(batch);
      after = batch[batch.length - 1]!.id;
    }
  }

  // --- helpers ---

  async #embedChunks(embedder: Embedder, parsed: ParsedDocumentInput): Promise<ChunkWrite[]> {
    const vectors = await this.#embed(embedder, parsed.chunks.map((chunk) => chunk.text));
    return parsed.chunks.map((chunk, i) => ({ ...chunk, publicId: newId('chunk_', 20), vector: vectors[i]! }));
  }

  async #embed(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
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

  /** Throws once closed; drops the vector indexes when another process has written the store since (they may be stale). */
  #open(): void {
    if (this.#closed) throw new Error('space library: closed');
    const version = this.#store.dataVersion();
    if (version !== this.#dataVersion) {
      this.#dataVersion = version;
      this.#indexes.clear();
      this.#textIndexes.clear();
    }
  }

  #space(name: string): SpaceRow {
    const valid = parseSpaceName(name, 'space');
    const row = this.#store.spaceByKey(spaceNameKey(valid));
    if (row === undefined) throw ApiError.notFound(`No space named ${quoteInput(valid)}.`, 'space_not_found', 'space');
    return row;
  }

  /** The space's row now, by row id (a space deleted and created again under its name is another space). */
  #currentSpace(row: SpaceRow): SpaceRow {
    const current = this.#store.spaceById(row.id);
    if (current === undefined) throw ApiError.notFound(`No space named ${quoteInput(row.name)}.`, 'space_not_found', 'space');
    return current;
  }

  #document(row: SpaceRow, documentId: string): DocumentRow {
    const document = typeof documentId === 'string' ? this.#store.documentByPublicId(row.id, documentId) : undefined;
    if (document === undefined) throw ApiError.notFound(`No document ${quoteInput(documentId)} in space ${quoteInput(row.name)}.`, 'document_not_found', 'document_id');
    return document;
  }

  #requireUniqueText(row: SpaceRow, documentId: string, contentHash: string): void {
    const other = this.#store.documentByHash(row.id, contentHash);
    if (other !== undefined && other.public_id !== documentId) {
      throw conflict(`Document ${quoteInput(other.public_id)} in space ${quoteInput(row.name)} already holds this text.`, 'duplicate_document', 'text');
    }
  }

  /** Whether the space's vectors are the library's embedder's: new spaces' embedder, what reindex moves a space to. */
  #isCurrent(row: SpaceRow): boolean {
    return row.embedder === this.#embedder.id && row.dimensions === this.#embedder.dimensions;
  }

  /**
   * The embedder that made the space's vectors, when this library can embed with it: its own
   * embedder, or, while that is the built-in one, any version of the built-in (no weights to
   * find), so a space made with `svc-hashed-embed-v1` keeps searching and ingesting with v1
   * vectors until a reindex moves it. Null otherwise: the space needs a reindex.
   */
  #embedderFor(row: SpaceRow): Embedder | null {
    if (this.#isCurrent(row)) return this.#embedder;
    const version = hashedEmbedderVersion(row.embedder);
    if (!(this.#embedder instanceof HashedEmbedder) || version === undefined) return null;
    const key = `${row.embedder}/${row.dimensions}`;
    let embedder = this.#builtinVersions.get(key);
    if (embedder === undefined) {
      embedder = new HashedEmbedder({ version, dimensions: row.dimensions });
      this.#builtinVersions.set(key, embedder);
    }
    return embedder;
  }

  #needsReindex(row: SpaceRow): boolean {
    return this.#embedderFor(row) === null;
  }

  #requireEmbedder(row: SpaceRow): Embedder {
    const embedder = this.#embedderFor(row);
    if (embedder === null) {
      throw reindexRequired(`Space ${quoteInput(row.name)} holds vectors of ${quoteInput(row.embedder)} (${row.dimensions} dimensions), not of ${quoteInput(this.#embedder.id)}: reindex it first (BM25 search still works).`);
    }
    return embedder;
  }

  /** Inside a write: the space still holds vectors of the embedder that made the new ones (a reindex may have swapped them since). */
  #requireSameEmbedder(row: SpaceRow, embedder: Embedder): void {
    if (row.embedder !== embedder.id || row.dimensions !== embedder.dimensions) {
      throw conflict(`Space ${quoteInput(row.name)} was reindexed to ${quoteInput(row.embedder)} while this text was embedded with ${quoteInput(embedder.id)}; send it again.`, 'reindex_required', 'space');
    }
  }

  #spaceRecord(row: SpaceRow): SpaceRecord {
    return {
      name: row.name,
      embedder: row.embedder,
      dimensions: row.dimensions,
      document_count: row.document_count,
      chunk_count: row.chunk_count,
      text_bytes: row.text_bytes,
      created_at: row.created_at,
      updated_at: row.updated_at,
      reindex_required: this.#needsReindex(row),
    };
  }
}

/** An input of addDocuments that is valid and new to the space, waiting for its group to be embedded and written. */
interface PendingDocument {
  index: number;
  parsed: ParsedDocumentInput;
  contentHash: string;
}

interface GroupDocument extends NewDocument {
  index: number;
  contentHash: string;
}

/** A chunk row id with a larger-is-better score (BM25, cosine); `space` set when lists of several spaces merge. */
interface Ranked {
  id: number;
  score: number;
  space?: number;
}

interface TextIndexFill {
  index: Bm25Index;
  /** Set once every chunk the space held is in: searches use the index from then on. */
  full: boolean;
  /** Settles when the fill ends (full, or dropped). */
  done: Promise<void>;
}

interface RankedLists {
  bm25: Ranked[] | null;
  dense: Ranked[] | null;
}

/** How deep each list goes: hybrid fuses deep lists so a passage ranked well by one list alone still surfaces. */
function searchDepth(request: ParsedSearchRequest): number {
  return request.mode === 'hybrid' ? Math.max(HYBRID_DEPTH, 4 * request.top_k) : request.top_k;
}

function conflict(message: string, code: string, param: string | null = null): ApiError {
  return new ApiError({ status: 409, type: 'invalid_request_error', code, message, param });
}

function reindexRequired(message: string): ApiError {
  return conflict(message, 'reindex_required', 'space');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function documentWrite(parsed: ParsedDocumentInput, contentHash: string): DocumentWrite {
  return {
    title: parsed.title,
    source: parsed.source,
    format: parsed.format,
    // fromEntries defines keys (never assigns them), so a `__proto__` key stays an ordinary key.
    metadata: JSON.stringify(Object.fromEntries(parsed.metadata)),
    metadataValues: parsed.metadata.map(([key, value]) => [key, metadataValueKey(value)]),
    contentHash,
    text: parsed.text,
    textBytes: Buffer.byteLength(parsed.text, 'utf8'),
    pages: parsed.pages,
  };
}

function documentRecord(row: DocumentRow, space: string): DocumentRecord {
  return {
    id: row.public_id,
    space,
    title: row.title,
    source: row.source,
    format: row.format,
    metadata: JSON.parse(row.metadata) as DocumentRecord['metadata'],
    content_hash: row.content_hash,
    chunk_count: row.chunk_count,
    text_bytes: row.text_bytes,
    pages: row.pages,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function searchResult(space: string, chunk: ChunkRow, terms: readonly string[], score: number, bm25Rank: number | null, denseRank: number | null): SearchResult {
  // FTS5 matches Porter stems, so the snippet marks words by their stem too.
  const { snippet, marks } = markedSnippet(chunk.text, terms, { matchKey: stemmer });
  return {
    space,
    chunk_id: chunk.public_id,
    document_id: chunk.document_public_id,
    title: chunk.title,
    source: chunk.source,
    page: chunk.page,
    heading_path: JSON.parse(chunk.heading_path) as string[],
    text: chunk.text,
    snippet,
    snippet_marks: marks,
    score,
    bm25_rank: bm25Rank,
    dense_rank: denseRank,
  };
}

function membership(ids: readonly number[]): (id: number) => boolean {
  const set = new Set(ids);
  return (id) => set.has(id);
}

function uniqueById(rows: SpaceRow[]): SpaceRow[] {
  const seen = new Set<number>();
  return rows.filter((row) => !seen.has(row.id) && (seen.add(row.id), true));
}
