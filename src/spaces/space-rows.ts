import type { ChunkDraft, DocumentFormat } from './space-document.ts';

/** The rows the space store reads (as SQLite returns them) and the writes it is given. */

export interface SpaceRow {
  id: number;
  name: string;
  embedder: string;
  dimensions: number;
  document_count: number;
  chunk_count: number;
  text_bytes: number;
  created_at: string;
  updated_at: string;
  /** The rerank default as JSON: `false`, `true` or a model id (space-store-schema.ts, version 2). */
  rerank: string;
  rerank_depth: number | null;
}

export interface DocumentRow {
  id: number;
  public_id: string;
  space_id: number;
  title: string | null;
  source: string | null;
  format: DocumentFormat;
  /** JSON of the metadata object. */
  metadata: string;
  content_hash: string;
  pages: number | null;
  chunk_count: number;
  text_bytes: number;
  created_at: string;
  updated_at: string;
}

export interface ChunkRow {
  id: number;
  public_id: string;
  position: number;
  page: number | null;
  /** JSON array of headings. */
  heading_path: string;
  text: string;
  document_public_id: string;
  title: string | null;
  source: string | null;
}

export interface DocumentWrite {
  title: string | null;
  source: string | null;
  format: DocumentFormat;
  metadata: string;
  /** Each metadata key with its value as JSON (what filters compare). */
  metadataValues: [string, string][];
  contentHash: string;
  text: string;
  textBytes: number;
  pages: number | null;
}

export interface ChunkWrite extends ChunkDraft {
  publicId: string;
  vector: Float32Array;
}

export interface NewDocument {
  publicId: string;
  document: DocumentWrite;
  chunks: readonly ChunkWrite[];
}
