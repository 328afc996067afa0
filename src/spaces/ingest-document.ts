import { chunkBlocks } from './chunk-blocks.ts';
import { extractBodyText, extractDocument } from './extract-document.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';
import type { DocumentInput } from './space-types.ts';

/** A file as it arrives (multipart upload, CLI path): bytes and what the sender called it. */
export interface UploadedFile {
  bytes: Uint8Array;
  filename?: string | undefined;
  contentType?: string | undefined;
}

export interface DocumentFields {
  title?: string | null | undefined;
  source?: string | null | undefined;
  metadata?: Record<string, string | number | boolean> | null | undefined;
}

/** Extraction's blocks become the library's input: the whole text (hashed for idempotency) and its chunks. */
function toInput(extracted: ExtractedDocument, fields: DocumentFields, fallbackTitle: string | undefined): DocumentInput {
  const text = extracted.blocks.map((b) => b.text).join('\n\n');
  return {
    title: fields.title ?? extracted.title ?? fallbackTitle ?? null,
    source: fields.source ?? null,
    format: extracted.format,
    metadata: fields.metadata ?? {},
    text,
    chunks: chunkBlocks(extracted.blocks),
    pages: extracted.pages ?? null,
  };
}

/** A file, extracted and chunked (the caller's title/source/metadata win over what the file says). */
export async function fileToDocument(file: UploadedFile, fields: DocumentFields, maxBytes: number): Promise<DocumentInput> {
  const extracted = await extractDocument({ bytes: file.bytes, filename: file.filename, contentType: file.contentType, maxBytes });
  return toInput(extracted, { ...fields, source: fields.source ?? file.filename ?? null }, file.filename);
}

/** Text posted as JSON (plain text or Markdown), chunked like a file of that format (and bounded like one). */
export async function textToDocument(text: string, format: Extract<DocumentFormat, 'text' | 'markdown'>, fields: DocumentFields): Promise<DocumentInput> {
  return toInput(await extractBodyText(text, format), fields, undefined);
}
