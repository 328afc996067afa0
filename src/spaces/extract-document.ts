import { detectDocumentFormat } from './detect-document-format.ts';
import { decodeDocumentText, extractText, requireText } from './extract-text.ts';
import { documentTooLarge, unsupportedDocumentType } from './extraction-errors.ts';
import { requireBoundedOutput } from './extraction-limits.ts';
import { sharedExtractionWorker, type ExtractionWorker } from './extraction-worker.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';
import { validateUploadFilename } from './upload-filename.ts';

/**
 * An uploaded file to blocks: its size checked, its name checked (a label, never a path), its
 * format detected from its bytes first (detect-document-format.ts), then read by the extractor
 * for that format, in the extraction process with a time, memory and output limit
 * (extraction-worker.ts, extraction-limits.ts).
 *
 * One case is read here, in the daemon: a plain-text file of at most IN_PROCESS_TEXT_BYTES
 * (and a JSON body's plain `text`), where a round trip to the process would cost more than the
 * reading. Its memory is provably a small multiple of its size: decoding, splitting at blank
 * lines and trimming each make one linear pass and one copy, and its text can only shrink.
 * Markdown, HTML, CSV and JSON are never read here, however small: their parsers build
 * structures that can be far larger than the input (a 14 KB markdown table asks marked for 12
 * million cells, a JSON record repeats its path on every line, nested lists indent every item).
 */

export { extractText } from './extract-text.ts';

/** The default upload limit: 32 MiB, a 300-page scanned-and-OCRed PDF or a long book as text. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;
/** The default time one document may take to read: a 32 MiB PDF reads in well under this. */
export const DEFAULT_EXTRACTION_TIMEOUT_MS = 60_000;
/** Plain-text files up to this size are read on the calling thread. */
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
  const worker = input.worker ?? sharedExtractionWorker();
  if (format !== 'text' || bytes.byteLength > IN_PROCESS_TEXT_BYTES) {
    return requireText(await worker.run(format, bytes, input.timeoutMs ?? DEFAULT_EXTRACTION_TIMEOUT_MS));
  }
  const text = decodeDocumentText(bytes);
  if (text === null) throw unsupportedDocumentType('The file is binary, not text; spaces read text, markdown, HTML, PDF, DOCX, CSV and JSON.');
  return requireBoundedOutput(extractText(text, format, 'file'), worker.maxTextBytes);
}

/**
 * Text posted in a JSON body (`{text, format}`): plain text of at most IN_PROCESS_TEXT_BYTES is
 * read here (see above), larger text and markdown in the extraction process, bounded as a file
 * is (32 MiB of text read here held the event loop about 100 ms). Errors name the body's `text` field.
 */
export async function extractBodyText(text: string, format: Extract<DocumentFormat, 'text' | 'markdown'>, options: { worker?: ExtractionWorker; timeoutMs?: number } = {}): Promise<ExtractedDocument> {
  const worker = options.worker ?? sharedExtractionWorker();
  // A UTF-16 unit is 1 to 3 bytes of UTF-8: only lengths between a third of the bound and the bound are measured.
  const small = text.length * 3 <= IN_PROCESS_TEXT_BYTES || (text.length <= IN_PROCESS_TEXT_BYTES && Buffer.byteLength(text, 'utf8') <= IN_PROCESS_TEXT_BYTES);
  if (format === 'text' && small) return requireBoundedOutput(extractText(text, format), worker.maxTextBytes, 'text');
  return requireText(await worker.runText(format, text, options.timeoutMs ?? DEFAULT_EXTRACTION_TIMEOUT_MS), 'text');
}
