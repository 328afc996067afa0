import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { SpaceEmbedders } from './space-embedders.ts';
import type { SpaceIndexes } from './space-indexes.ts';
import { parseSpaceName, spaceNameKey } from './space-name.ts';
import type { DocumentRow, SpaceRow } from './space-rows.ts';
import type { SpaceStore } from './space-store.ts';

/**
 * What the parts of one space library (space-library.ts, space-ingest.ts, space-search.ts)
 * share: the store, the embedders, the in-memory indexes, and the checks every operation starts
 * with (the library still open, a space or document that exists).
 */
export class SpaceAccess {
  readonly store: SpaceStore;
  readonly embedders: SpaceEmbedders;
  readonly indexes: SpaceIndexes;
  #dataVersion: number;
  #closed = false;

  constructor(store: SpaceStore, embedders: SpaceEmbedders, indexes: SpaceIndexes) {
    this.store = store;
    this.embedders = embedders;
    this.indexes = indexes;
    this.#dataVersion = store.dataVersion();
  }

  /** Throws once closed; drops the vector indexes when another process has written the store since (they may be stale). */
  open(): void {
    if (this.#closed) throw new Error('space library: closed');
    const version = this.store.dataVersion();
    if (version !== this.#dataVersion) {
      this.#dataVersion = version;
      this.indexes.clear();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.indexes.close();
    await this.store.close();
  }

  space(name: string): SpaceRow {
    const valid = parseSpaceName(name, 'space');
    const row = this.store.spaceByKey(spaceNameKey(valid));
    if (row === undefined) throw ApiError.notFound(`No space named ${quoteInput(valid)}.`, 'space_not_found', 'space');
    return row;
  }

  /** The space's row now, by row id (a space deleted and created again under its name is another space). */
  currentSpace(row: SpaceRow): SpaceRow {
    const current = this.store.spaceById(row.id);
    if (current === undefined) throw ApiError.notFound(`No space named ${quoteInput(row.name)}.`, 'space_not_found', 'space');
    return current;
  }

  document(row: SpaceRow, documentId: string): DocumentRow {
    const document = typeof documentId === 'string' ? this.store.documentByPublicId(row.id, documentId) : undefined;
    if (document === undefined) throw ApiError.notFound(`No document ${quoteInput(documentId)} in space ${quoteInput(row.name)}.`, 'document_not_found', 'document_id');
    return document;
  }
}
