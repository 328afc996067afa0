import { join } from 'node:path';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { HashedEmbedder } from './hashed-embedder.ts';
import { defaultVectorIndex } from './hnsw-vector-index.ts';
import { SpaceAccess } from './space-access.ts';
import { EMBED_BATCH, embedInBatches, SpaceEmbedders } from './space-embedders.ts';
import { spaceConflict } from './space-errors.ts';
import { SpaceIndexes } from './space-indexes.ts';
import { SpaceIngest } from './space-ingest.ts';
import { parsePage } from './space-input.ts';
import { parseSpaceName, spaceNameKey } from './space-name.ts';
import { documentRecord, searchDefaultsOf, searchDefaultsRow } from './space-records.ts';
import { spaceDefaultsSchema } from './space-schemas.ts';
import type { SpaceRow } from './space-rows.ts';
import { SpaceSearch } from './space-search.ts';
import { SpaceStore } from './space-store.ts';
import type { AddDocumentResult, ChunkRecord, DocumentInput, DocumentRecord, Embedder, SearchRequest, SearchResult, SpaceLibrary, SpaceRecord, SpaceSearchDefaults } from './space-types.ts';
import type { VectorIndexFactory } from './vector-index.ts';

export interface SpaceLibraryOptions {
  /** The svc data dir: the spaces live in `<dataDir>/spaces/spaces.db`. */
  dataDir: string;
  /** The embedder new spaces and new documents use; the built-in HashedEmbedder unless told. */
  embedder?: Embedder;
  /** The in-memory nearest-neighbour index per space; the exact scan, a graph in front past a size (hnsw-vector-index.ts), unless told. */
  vectorIndex?: VectorIndexFactory;
  /** How long a far-behind graph waits after a space's last write before building (GRAPH_WRITE_QUIET_MS in space-indexes.ts unless told). */
  graphWriteQuietMs?: number;
}

/** Opens the knowledge spaces in `dataDir` (creating the store on first use). */
export async function openSpaceLibrary(options: SpaceLibraryOptions): Promise<SpaceLibrary> {
  const store = SpaceStore.open(join(options.dataDir, 'spaces', 'spaces.db'));
  const indexes = new SpaceIndexes(store, options.vectorIndex ?? defaultVectorIndex, join(options.dataDir, 'spaces', 'graphs'), options.graphWriteQuietMs);
  return new LocalSpaceLibrary(store, options.embedder ?? new HashedEmbedder(), indexes);
}

/**
 * The knowledge-space library over one SQLite store. Writes follow one pattern: validate,
 * embed (the only await), then check again and write in ONE synchronous transaction, then
 * update the in-memory vector index. Nothing is awaited between BEGIN and COMMIT, so a search
 * (which is synchronous once its query vector is made) sees a document wholly or not at all,
 * and the checks before the await are repeated inside the transaction because anything may
 * have happened while embedding (the space deleted or reindexed, the same text added).
 *
 * Adding and replacing documents is in space-ingest.ts, search in space-search.ts, the
 * in-memory indexes' upkeep in space-indexes.ts; this class holds the spaces themselves, the
 * reads, reindex and close.
 */
class LocalSpaceLibrary implements SpaceLibrary {
  readonly #access: SpaceAccess;
  readonly #store: SpaceStore;
  readonly #embedders: SpaceEmbedders;
  readonly #indexes: SpaceIndexes;
  readonly #ingest: SpaceIngest;
  readonly #search: SpaceSearch;

  constructor(store: SpaceStore, embedder: Embedder, indexes: SpaceIndexes) {
    this.#store = store;
    this.#embedders = new SpaceEmbedders(embedder);
    this.#indexes = indexes;
    this.#access = new SpaceAccess(store, this.#embedders, this.#indexes);
    this.#ingest = new SpaceIngest(this.#access);
    this.#search = new SpaceSearch(this.#access);
  }

  async createSpace(name: string, defaults: Partial<SpaceSearchDefaults> = {}): Promise<SpaceRecord> {
    this.#access.open();
    const valid = parseSpaceName(name);
    const given = parseWithSchema(spaceDefaultsSchema, defaults);
    const stored = searchDefaultsRow({ rerank: given.rerank ?? false, rerank_depth: given.rerank_depth ?? null });
    const now = new Date().toISOString();
    const embedder = this.#embedders.current;
    const row = this.#store.transaction(() => this.#store.insertSpace(valid, spaceNameKey(valid), embedder.id, embedder.dimensions, stored, now));
    if (row === null) throw spaceConflict(`A space named ${quoteInput(valid)} already exists (names are unique regardless of case).`, 'space_exists', 'name');
    return this.#spaceRecord(row);
  }

  async listSpaces(): Promise<SpaceRecord[]> {
    this.#access.open();
    return this.#store.listSpaces().map((row) => this.#spaceRecord(row));
  }

  async getSpace(name: string): Promise<SpaceRecord> {
    this.#access.open();
    return this.#spaceRecord(this.#access.space(name));
  }

  async updateSpace(name: string, changes: Partial<SpaceSearchDefaults>): Promise<SpaceRecord> {
    this.#access.open();
    const given = parseWithSchema(spaceDefaultsSchema, changes);
    const now = new Date().toISOString();
    const row = this.#store.transaction(() => {
      const current = this.#access.space(name);
      const before = searchDefaultsOf(current);
      const after = { rerank: given.rerank ?? before.rerank, rerank_depth: given.rerank_depth === undefined ? before.rerank_depth : given.rerank_depth };
      return this.#store.updateSpaceDefaults(current.id, searchDefaultsRow(after), now)!;
    });
    return this.#spaceRecord(row);
  }

  async deleteSpace(name: string): Promise<void> {
    this.#access.open();
    const row = this.#access.space(name);
    this.#store.transaction(() => this.#store.deleteSpace(row.id));
    this.#indexes.drop(row.id);
  }

  async addDocument(space: string, input: DocumentInput): Promise<{ document: DocumentRecord; created: boolean }> {
    const [result] = await this.addDocuments(space, [input]);
    if (!result!.ok) throw result!.error;
    return { document: result!.document, created: result!.created };
  }

  addDocuments(space: string, inputs: readonly DocumentInput[], onResult?: (index: number, result: AddDocumentResult) => void): Promise<AddDocumentResult[]> {
    return this.#ingest.addDocuments(space, inputs, onResult);
  }

  replaceDocument(space: string, documentId: string, input: DocumentInput): Promise<DocumentRecord> {
    return this.#ingest.replaceDocument(space, documentId, input);
  }

  async deleteDocument(space: string, documentId: string): Promise<void> {
    this.#access.open();
    const row = this.#access.space(space);
    const now = new Date().toISOString();
    const removed = this.#store.transaction(() => this.#store.deleteDocument(row, this.#access.document(row, documentId), now));
    this.#indexes.remove(row.id, removed);
  }

  async listDocuments(space: string, page?: { limit?: number; after?: string }): Promise<{ documents: DocumentRecord[]; next: string | null }> {
    this.#access.open();
    const { limit, after } = parsePage(page);
    const row = this.#access.space(space);
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
    this.#access.open();
    const row = this.#access.space(space);
    const document = this.#access.document(row, documentId);
    const record = documentRecord(document, row.name);
    return options.includeText === true ? { ...record, text: this.#store.documentText(document.id) } : record;
  }

  async listChunks(space: string, documentId: string, page?: { limit?: number; after?: string }): Promise<{ chunks: ChunkRecord[]; next: string | null }> {
    this.#access.open();
    const { limit, after } = parsePage(page);
    const row = this.#access.space(space);
    const document = this.#access.document(row, documentId);
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

  search(space: string, request: SearchRequest): Promise<SearchResult[]> {
    return this.#search.search(space, request);
  }

  searchAll(request: SearchRequest & { spaces?: string[] }): Promise<SearchResult[]> {
    return this.#search.searchAll(request);
  }

  async warmUp(space: string): Promise<void> {
    this.#access.open();
    const row = this.#access.space(space);
    if (!this.#embedders.needsReindex(row)) this.#indexes.vectorIndex(row);
    this.#indexes.textIndex(row);
    await this.#indexes.textIndexSettled(row.id);
  }

  async reindex(space: string, onProgress?: (done: number, total: number) => void): Promise<SpaceRecord> {
    this.#access.open();
    const row = this.#access.space(space);
    if (this.#embedders.isCurrent(row)) return this.#spaceRecord(row);
    // New vectors go to a side table batch by batch and replace the old ones in one transaction,
    // so searches never see two embedders' vectors in one space, and a crash loses only progress.
    this.#store.transaction(() => this.#store.clearReindexVectors(row.id));
    const total = row.chunk_count;
    let done = 0;
    let after = 0;
    for (;;) {
      const current = this.#access.currentSpace(row);
      if (this.#embedders.isCurrent(current)) return this.#spaceRecord(current);
      // One pass in row id order, then whatever is still without a vector (nothing, unless the
      // space changed while embedding): the swap happens only when that finds none.
      let batch = this.#store.chunksAfter(row.id, after, EMBED_BATCH);
      if (batch.length === 0) batch = this.#store.chunksWithoutReindexVector(row.id, EMBED_BATCH);
      else after = batch[batch.length - 1]!.id;
      if (batch.length === 0) {
        // No await between this check and the swap: every chunk has its new vector.
        const now = new Date().toISOString();
        this.#store.transaction(() => this.#store.swapReindexVectors(row.id, this.#embedders.current.id, this.#embedders.current.dimensions, now));
        this.#indexes.dropVectors(row.id);
        return this.#spaceRecord(this.#access.currentSpace(row));
      }
      const vectors = await embedInBatches(this.#embedders.current, batch.map((chunk) => chunk.text));
      this.#access.open();
      this.#store.transaction(() => {
        this.#access.currentSpace(row);
        this.#store.putReindexVectors(row.id, batch.map((chunk, i) => ({ id: chunk.id, vector: vectors[i]! })));
      });
      done += batch.length;
      onProgress?.(Math.min(done, total), Math.max(done, total));
    }
  }

  async close(): Promise<void> {
    await this.#access.close();
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
      ...searchDefaultsOf(row),
      reindex_required: this.#embedders.needsReindex(row),
    };
  }
}
