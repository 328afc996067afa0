import type { ChunkDraft, DocumentFormat } from './space-document.ts';

/**
 * The records a knowledge space hands out and the library's surface (space-library.ts
 * implements it; the HTTP routes, the CLI, chat retrieval and the evaluation harness use it).
 * Field names are the wire names: routes send these records as they are.
 */

/**
 * How a space is searched when the search does not say (docs/spaces.md, "Rerank"): `rerank`
 * is off (`false`), the daemon's first reranker (`true`) or a reranker model's id; `rerank_depth`
 * how many fused candidates it reads (null: the search default, 30).
 */
export interface SpaceSearchDefaults {
  rerank: boolean | string;
  rerank_depth: number | null;
}

/** A space as listed: what it holds, which embedder made its vectors, how it is searched by default. */
export interface SpaceRecord extends SpaceSearchDefaults {
  name: string;
  /** The embedder whose vectors the space holds (e.g. `svc-hashed-embed-v2`, or a GGUF model id). */
  embedder: string;
  dimensions: number;
  document_count: number;
  chunk_count: number;
  /** Bytes of extracted text held (what search runs over), not of the original files. */
  text_bytes: number;
  created_at: string;
  updated_at: string;
  /** Set when the configured embedder differs from the space's: search keeps using the old vectors' embedder only if it is still available; `svc spaces reindex` (or POST …/reindex) moves the space. */
  reindex_required?: boolean;
}

export interface DocumentRecord {
  id: string;
  space: string;
  title: string | null;
  /** Where the text came from: a file name, a URL, whatever the caller said. */
  source: string | null;
  format: DocumentFormat;
  /** The caller's metadata, a flat object of strings, numbers and booleans. */
  metadata: Record<string, string | number | boolean>;
  /** sha256 of the extracted text, hex: re-adding the same text to the same space is idempotent. */
  content_hash: string;
  chunk_count: number;
  text_bytes: number;
  pages: number | null;
  created_at: string;
  updated_at: string;
}

/** What the library is given to add or replace a document: already extracted and chunked. */
export interface DocumentInput {
  title?: string | null;
  source?: string | null;
  format: DocumentFormat;
  metadata?: Record<string, string | number | boolean>;
  /** The whole extracted text, for the content hash and for `GET …/documents/:id?text=1`. */
  text: string;
  chunks: ChunkDraft[];
  pages?: number | null;
}

/** One chunk (passage) of a document as `GET …/documents/:id/chunks` lists it. */
export interface ChunkRecord {
  /** The id search results name as `chunk_id`. */
  id: string;
  /** 0-based place in the document. */
  position: number;
  page: number | null;
  heading_path: string[];
  text: string;
}

export const SEARCH_MODES = ['hybrid', 'bm25', 'dense'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export interface SearchFilter {
  /** Only chunks of these document ids. */
  document_ids?: string[];
  /** Only documents whose metadata has each of these key/value pairs (exact match). */
  metadata?: Record<string, string | number | boolean>;
}

export interface SearchRequest {
  query: string;
  mode?: SearchMode;
  /** How many results; default 8, at most 100. */
  top_k?: number;
  filter?: SearchFilter;
}

export interface SearchResult {
  space: string;
  chunk_id: string;
  document_id: string;
  title: string | null;
  source: string | null;
  page: number | null;
  heading_path: string[];
  /** The chunk's whole text. */
  text: string;
  /** A short passage around the best match with matched terms wrapped in «» (plain text, no HTML). */
  snippet: string;
  /**
   * Where the matched words are in `snippet`: [start, end) in UTF-16 code units, the API's «
   * just before and » just after each. A document's own « » are text; only these are marks.
   */
  snippet_marks: [number, number][];
  /** The fused score (hybrid: reciprocal rank fusion, k = 60), larger is better. */
  score: number;
  /** The reranker's score, when the search asked for a rerank (space-reranker.ts); results are then in its order. */
  rerank_score?: number;
  /** Ranks in each list before fusion (null: not in that list). */
  bm25_rank: number | null;
  dense_rank: number | null;
}

/** Turns text into unit-length vectors. The built-in embedder and GGUF embedding models implement it. */
export interface Embedder {
  /** The id recorded on a space and served by `/v1/embeddings` (`svc-hashed-embed-v2`, a model id). */
  readonly id: string;
  readonly dimensions: number;
  /** One L2-normalized vector per text, in order. */
  embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]>;
}

/** One input's outcome in `addDocuments`: its document (`created: false` when the text was there already), or why it failed. */
export type AddDocumentResult = { ok: true; document: DocumentRecord; created: boolean } | { ok: false; error: unknown };

/** The knowledge-space library: persistent, transactional, free of HTTP. Errors are ApiErrors. */
export interface SpaceLibrary {
  /** A new space, with its search defaults when given (off otherwise). */
  createSpace(name: string, defaults?: Partial<SpaceSearchDefaults>): Promise<SpaceRecord>;
  listSpaces(): Promise<SpaceRecord[]>;
  getSpace(name: string): Promise<SpaceRecord>;
  /** Changes a space's search defaults: the fields given, the others as they are. */
  updateSpace(name: string, changes: Partial<SpaceSearchDefaults>): Promise<SpaceRecord>;
  deleteSpace(name: string): Promise<void>;
  /** Adds a document; the same text already in the space returns the existing record, `created: false`. */
  addDocument(space: string, input: DocumentInput): Promise<{ document: DocumentRecord; created: boolean }>;
  /**
   * Adds many documents, several to a transaction (what makes bulk ingest fast), each whole or
   * not at all. One result per input, in order: a bad input or one the store refuses fails
   * alone. `onResult` hears each as it is settled (not necessarily in input order). Throws only
   * what fails the whole call up front (no such space, vectors of another embedder).
   */
  addDocuments(space: string, inputs: readonly DocumentInput[], onResult?: (index: number, result: AddDocumentResult) => void): Promise<AddDocumentResult[]>;
  /** Replaces a document's text and chunks in one transaction: its old chunks are never seen again. */
  replaceDocument(space: string, documentId: string, input: DocumentInput): Promise<DocumentRecord>;
  deleteDocument(space: string, documentId: string): Promise<void>;
  listDocuments(space: string, page?: { limit?: number; after?: string }): Promise<{ documents: DocumentRecord[]; next: string | null }>;
  /** A document's record; with `includeText`, its whole extracted text too. */
  getDocument(space: string, documentId: string, options?: { includeText?: boolean }): Promise<DocumentRecord & { text?: string }>;
  /** A page of a document's chunks in document order, after the chunk id `after`; `next` is the last one's id when more follow. */
  listChunks(space: string, documentId: string, page?: { limit?: number; after?: string }): Promise<{ chunks: ChunkRecord[]; next: string | null }>;
  search(space: string, request: SearchRequest): Promise<SearchResult[]>;
  /** Searches several spaces (all when `spaces` is absent) and fuses the lists by rank. */
  searchAll(request: SearchRequest & { spaces?: string[] }): Promise<SearchResult[]>;
  /**
   * Fills the space's in-memory search indexes now rather than on its first search (which
   * starts them: the vector index at once, the BM25 index in the background, FTS5 answering
   * BM25 until it is full). Resolves once both are full, or once the BM25 fill stops early
   * (the space deleted, another process wrote the store: the next search starts it again).
   */
  warmUp(space: string): Promise<void>;
  /** Re-embeds every chunk of a space with the library's current embedder. */
  reindex(space: string, onProgress?: (done: number, total: number) => void): Promise<SpaceRecord>;
  close(): Promise<void>;
}
