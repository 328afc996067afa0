import { createHash } from 'node:crypto';
import { newTimeOrderedId } from '../shared/new-id.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { SpaceAccess } from './space-access.ts';
import { embedInBatches } from './space-embedders.ts';
import { spaceConflict } from './space-errors.ts';
import { metadataValueKey, parseDocumentInput, type ParsedDocumentInput } from './space-input.ts';
import { documentRecord } from './space-records.ts';
import type { ChunkWrite, DocumentWrite, NewDocument, SpaceRow } from './space-rows.ts';
import type { AddDocumentResult, DocumentInput, DocumentRecord, Embedder } from './space-types.ts';

/**
 * addDocuments closes a write transaction once it holds this many chunks. Each commit writes
 * every page the transaction touched to the WAL: the chunks' own pages, but also a level-0 FTS5
 * segment (merged again later), every page of the word statistics and of the content-hash index
 * its documents landed on. Those last ones are spread over the whole table, so their share grows
 * with the space, and fewer, larger commits write each of them once for more chunks: to 60,000
 * chunks the process wrote 873 MB at 256 a commit, 713 MB at 512, 648 MB at 1,024 and 571 MB at 2,048
 * (/proc/self/io wchar, docs/benchmarks-log.md 2026-11-28 18:26). The price is the event loop
 * held for the whole write, about 0.1 ms a chunk: 256 hold it ~25 ms, 512 ~50 ms. The daemon serves
 * chat streams on the same thread, so svc keeps 256: a 50 ms stall per write during a bulk ingest
 * would show in every concurrent stream's token timing, for 18% less written.
 */
const WRITE_BATCH_CHUNKS = 256;

/**
 * Adding and replacing documents, in the library's write pattern (space-library.ts): validate,
 * embed (the only await), then check again and write in ONE synchronous transaction, then
 * update the in-memory indexes.
 */
export class SpaceIngest {
  readonly #access: SpaceAccess;

  constructor(access: SpaceAccess) {
    this.#access = access;
  }

  async addDocuments(space: string, inputs: readonly DocumentInput[], onResult?: (index: number, result: AddDocumentResult) => void): Promise<AddDocumentResult[]> {
    const access = this.#access;
    access.open();
    const row = access.space(space);
    const embedder = access.embedders.require(row);
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
    // Groups are embedded one ahead of the write: while a group's transaction holds the event
    // loop, the next group's vectors are computed (on a worker thread, for the built-in embedder:
    // OffThreadHashedEmbedder; a model embeds natively off the loop anyway). Writes stay in order.
    let writing: Promise<void> = Promise.resolve();
    const flush = async (pending: readonly PendingDocument[]): Promise<void> => {
      const embedded = this.#embedGroup(embedder, pending, settle);
      await writing;
      writing = embedded.then((documents) => this.#writeGroup(row, embedder, documents, settle));
    };
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
      const existing = access.store.documentByHash(row.id, contentHash);
      if (existing !== undefined) {
        settle(index, { ok: true, document: documentRecord(existing, row.name), created: false });
        continue;
      }
      group.push({ index, parsed, contentHash });
      groupChunks += parsed.chunks.length;
      if (groupChunks >= WRITE_BATCH_CHUNKS) {
        await flush(group);
        group = [];
        groupChunks = 0;
      }
    }
    if (group.length > 0) await flush(group);
    await writing;
    for (const { index, first } of repeats) {
      const result = results[first]!;
      settle(index, result.ok ? { ok: true, document: result.document, created: false } : result);
    }
    return results;
  }

  /** A group's documents with their vectors and new ids; the whole group failed (and is settled) when its embedding did. */
  async #embedGroup(embedder: Embedder, group: readonly PendingDocument[], settle: (index: number, result: AddDocumentResult) => void): Promise<GroupDocument[]> {
    try {
      const vectors = await embedInBatches(embedder, group.flatMap((pending) => pending.parsed.chunks.map((chunk) => chunk.text)));
      let next = 0;
      return group.map(({ index, parsed, contentHash }) => ({
        index,
        contentHash,
        // Time-ordered (same length and alphabet as before): the public_id indexes then take each
        // new row on their rightmost leaf instead of a random one, which with random ids made every
        // commit rewrite leaves all over those indexes (60,000 chunks: 1,354 MB written, 873 MB now).
        publicId: newTimeOrderedId('doc_', 15),
        document: documentWrite(parsed, contentHash),
        chunks: parsed.chunks.map((chunk) => ({ ...chunk, publicId: newTimeOrderedId('chunk_', 11), vector: vectors[next++]! })),
      }));
    } catch (error) {
      for (const { index } of group) settle(index, { ok: false, error });
      return [];
    }
  }

  /**
   * Writes a group of embedded documents in one transaction. A group the store refuses is
   * written again one document per transaction, so only the document at fault fails.
   */
  #writeGroup(row: SpaceRow, embedder: Embedder, documents: readonly GroupDocument[], settle: (index: number, result: AddDocumentResult) => void): void {
    if (documents.length === 0) return;
    const access = this.#access;
    const store = access.store;
    try {
      // The library may have been closed while the group was embedded.
      access.open();
    } catch (error) {
      for (const { index } of documents) settle(index, { ok: false, error });
      return;
    }
    // Anything may have happened while embedding: the same text may have arrived since.
    const write = (batch: readonly GroupDocument[]) => store.transaction(() => {
      const current = access.currentSpace(row);
      access.embedders.requireSame(current, embedder);
      const raced = batch.map((document) => store.documentByHash(current.id, document.contentHash));
      const fresh = batch.filter((_, i) => raced[i] === undefined);
      const inserted = store.insertDocuments(current, fresh, new Date().toISOString());
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
    access.indexes.upsert(row.id, written.flatMap(({ document, inserted }) => inserted?.chunkIds.map((id, j) => ({ id, vector: document.chunks[j]!.vector, text: document.chunks[j]!.text })) ?? []));
    for (const { document, raced, inserted } of written) {
      settle(document.index, inserted === undefined
        ? { ok: true, document: documentRecord(raced!, row.name), created: false }
        : { ok: true, document: documentRecord(inserted.row, row.name), created: true });
    }
  }

  async replaceDocument(space: string, documentId: string, input: DocumentInput): Promise<DocumentRecord> {
    const access = this.#access;
    access.open();
    const parsed = parseDocumentInput(input);
    const row = access.space(space);
    const embedder = access.embedders.require(row);
    access.document(row, documentId);
    const contentHash = sha256(parsed.text);
    this.#requireUniqueText(row, documentId, contentHash);

    const chunks = await embedChunks(embedder, parsed);
    access.open();
    const now = new Date().toISOString();
    const outcome = access.store.transaction(() => {
      const current = access.currentSpace(row);
      access.embedders.requireSame(current, embedder);
      const old = access.document(current, documentId);
      this.#requireUniqueText(current, documentId, contentHash);
      return access.store.replaceDocument(current, old, documentWrite(parsed, contentHash), chunks, now);
    });
    access.indexes.replace(row.id, outcome.removedIds, outcome.chunkIds.map((id, i) => ({ id, vector: chunks[i]!.vector, text: chunks[i]!.text })));
    return documentRecord(outcome.row, row.name);
  }

  #requireUniqueText(row: SpaceRow, documentId: string, contentHash: string): void {
    const other = this.#access.store.documentByHash(row.id, contentHash);
    if (other !== undefined && other.public_id !== documentId) {
      throw spaceConflict(`Document ${quoteInput(other.public_id)} in space ${quoteInput(row.name)} already holds this text.`, 'duplicate_document', 'text');
    }
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

async function embedChunks(embedder: Embedder, parsed: ParsedDocumentInput): Promise<ChunkWrite[]> {
  const vectors = await embedInBatches(embedder, parsed.chunks.map((chunk) => chunk.text));
  return parsed.chunks.map((chunk, i) => ({ ...chunk, publicId: newTimeOrderedId('chunk_', 11), vector: vectors[i]! }));
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
