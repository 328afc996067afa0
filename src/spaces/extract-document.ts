import { detectDocumentFormat } from './detect-document-format.ts';
import { decodeDocumentText, extractText, requireText } from './extract-text.ts';
import { documentTooLarge, unsupportedDocumentType } from './extraction-errors.ts';
import { sharedExtractionWorker, type ExtractionWorker } from './extraction-worker.ts';
import type { ExtractedDocument } from './space-document.ts';
import { validateUploadFilename } from './upload-filename.ts';

/**
 * An uploaded file to blocks: its size checked, its name checked (a label, never a path), its
 * format detected from its bytes first (detect-document-format.ts), then read by the extractor
 * for that format. PDF and DOCX are read on a worker thread with a time and memory limit
 * (extraction-worker.ts), and so is any text file over IN_PROCESS_TEXT_BYTES; small text files
 * are read here, where starting a thread would cost more than reading them.
 */

export { extractText } from './extract-text.ts';

/** The default upload limit: 32 MiB, a 300-page scanned-and-OCRed PDF or a long book as text. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;
/** The default time one document may take to read: a 32 MiB PDF reads in well under this. */
export const DEFAULT_EXTRACTION_TIMEOUT_MS = 60_000;
/** Text files up to this size are read on the calling thread. */
export const IN_PROCESS_TEXT_BYTES = 256 * 1024;

export interface ExtractDocumentInput {
  bytes: Uint8Array;
  /** The upload's file name: checked (`invalid_filename`) and used for its extension. */
  filename?: string;
  /** The upload's content type; consulted when the name has no known extension. */
  contentType?: string;
  /** Default DEFAULT_MAX_DOCUMENT_BYTES. */
  maxBytes?: number;
  /** Default DEFAULT_EXTRACTION_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The worker to read on; default the process's shared one. */
  worker?: ExtractionWorker;
}

export async function extractDocument(input: ExtractDocumentInput): Promise<ExtractedDocument> {
  const { bytes, filename, contentType } = input;
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  if (bytes.byteLength > maxBytes) {
    throw documentTooLarge(`The file is ${bytes.byteLength} bytes; at most ${maxBytes} bytes are accepted.`);
  }
  if (filename !== undefined) validateUploadFilename(filename);
  if (bytes.byteLength === 0) return requireText({ format: 'text', blocks: [] });
  const format = await detectDocumentFormat(bytes, { filename, contentType });
  if (format === 'pdf' || format === 'docx' || bytes.byteLength > IN_PROCESS_TEXT_BYTES) {
    const worker = input.worker ?? sharedExtractionWorker();
    return requireText(await worker.run(format, bytes, input.timeoutMs ?? DEFAULT_EXTRACTION_TIMEOUT_MS));
  }
  const text = decodeDocumentText(bytes);
  if (text === null) throw unsupportedDocumentType('The file is binary, not text; spaces read text, markdown, HTML, PDF, DOCX, CSV and JSON.');
  return extractText(text, format, 'file');
}
