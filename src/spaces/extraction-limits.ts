import { Buffer } from 'node:buffer';
import { documentExpandsTooFar } from './extraction-errors.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * The bounds one document's extraction runs under (docs/spaces.md, "Extraction bounds"):
 *
 * - memory: the extraction process may hold at most `memoryMb` MiB: its JavaScript heap, its
 *   buffers (a PDF stream pdf.js inflates lives in an ArrayBuffer, outside the heap) and native
 *   memory alike (extraction-worker.ts says how each platform enforces it);
 * - output: the extracted text (UTF-8 bytes, each block counted BLOCK_OVERHEAD_BYTES more, since
 *   a million one-letter blocks cost the daemon far more than their letters) may be at most
 *   `maxTextBytes`. The text crosses into the daemon, is chunked and waits in the ingest queue:
 *   this bound is what keeps that small whatever the file's format could expand to;
 * - time: DEFAULT_EXTRACTION_TIMEOUT_MS (extract-document.ts).
 *
 * `SVC_EXTRACTION_MEMORY_MB` and `SVC_EXTRACTION_MAX_TEXT_MB` (positive integers) change the
 * defaults, for a machine with little memory, or a test that wants its bombs small.
 */

/** 512 MiB: the largest real documents (a 32 MiB, 300-page PDF; a 64 MiB unpacked DOCX) read in well under this. */
export const DEFAULT_EXTRACTION_MEMORY_MB = 512;
/** 64 MiB of text: twice the largest upload, so no real text file, CSV or book reaches it. */
export const DEFAULT_MAX_EXTRACTED_TEXT_BYTES = 64 * 1024 * 1024;
/** What each block costs beyond its text: its object, its kind, its place in the arrays that hold it. */
export const BLOCK_OVERHEAD_BYTES = 64;

/**
 * Headings longer than this are read as paragraphs. A heading is repeated in the heading path of
 * every passage under it (chunk-blocks.ts), so the output bound alone would let a 1 MB "heading"
 * over 2 MB of text become 2 GB of stored passages; real headings are a line.
 */
export const MAX_HEADING_CHARS = 500;

/** A heading block, or a paragraph when `text` is too long to be a heading. */
export function headingOrParagraph(level: number, text: string): DocumentBlock {
  return text.length <= MAX_HEADING_CHARS ? { kind: 'heading', level, text } : { kind: 'paragraph', text };
}

export interface ExtractionLimits {
  memoryMb: number;
  maxTextBytes: number;
}

export function extractionLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): ExtractionLimits {
  const memoryMb = positiveInteger(env['SVC_EXTRACTION_MEMORY_MB']);
  const textMb = positiveInteger(env['SVC_EXTRACTION_MAX_TEXT_MB']);
  return {
    memoryMb: memoryMb ?? DEFAULT_EXTRACTION_MEMORY_MB,
    maxTextBytes: textMb === undefined ? DEFAULT_MAX_EXTRACTED_TEXT_BYTES : textMb * 1024 * 1024,
  };
}

function positiveInteger(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** What `document` counts against the output bound. */
export function extractedSize(document: ExtractedDocument): number {
  let size = Buffer.byteLength(document.title ?? '');
  for (const block of document.blocks) size += Buffer.byteLength(block.text) + BLOCK_OVERHEAD_BYTES;
  return size;
}

/** `document`, or 413 `document_expands_too_far` when its text is over `maxTextBytes`. */
export function requireBoundedOutput(document: ExtractedDocument, maxTextBytes: number, param: string | null = 'file'): ExtractedDocument {
  const size = extractedSize(document);
  if (size <= maxTextBytes) return document;
  throw documentExpandsTooFar(`The document's extracted text is ${formatMib(size)}; at most ${formatMib(maxTextBytes)} of text is read from one document.`, param);
}

function formatMib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
