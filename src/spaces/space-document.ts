/**
 * The shapes a document passes through on its way into a knowledge space: extraction turns a
 * file into blocks that keep its structure (extract-document.ts), chunking turns blocks into
 * chunks that keep where they came from (chunk-blocks.ts), and the space store keeps the chunks
 * with their citation fields (space-store.ts). Plain data, so each step is a library with no HTTP.
 */

/** The file formats a space accepts. */
export const DOCUMENT_FORMATS = ['text', 'markdown', 'html', 'pdf', 'docx', 'csv', 'json'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** One structural unit of a document, in reading order. */
export interface DocumentBlock {
  kind: 'heading' | 'paragraph' | 'list' | 'code' | 'table';
  /** The block's text as a reader sees it (a list keeps its items on lines, a table its rows). */
  text: string;
  /** Heading level 1-6, for `heading` blocks only. */
  level?: number;
  /** The 1-based page it starts on, for formats that have pages (PDF). */
  page?: number;
  /**
   * For `table` blocks: how many leading lines of `text` are header rows. The chunker repeats
   * them atop every chunk that continues the table, so each chunk of a big table says what its
   * columns are.
   */
  headerRows?: number;
}

export interface ExtractedDocument {
  format: DocumentFormat;
  /** A title found in the file (HTML <title>, a first-level heading, PDF metadata), if any. */
  title?: string;
  blocks: DocumentBlock[];
  /** Page count, for formats that have pages. */
  pages?: number;
}

/** A chunk before it is stored: its text and where it came from, for citations. */
export interface ChunkDraft {
  text: string;
  /** 0-based order of the chunk in its document. */
  position: number;
  /** The 1-based page the chunk starts on, or null for formats without pages. */
  page: number | null;
  /** The headings above the chunk, outermost first (["Install", "On Linux"]). */
  headingPath: string[];
}
