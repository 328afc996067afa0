import { ApiError } from '../shared/api-error.ts';
import { extractCsv } from './extract-csv.ts';
import { extractHtml } from './extract-html.ts';
import { extractJson } from './extract-json.ts';
import { extractMarkdown } from './extract-markdown.ts';
import { extractPlainText } from './extract-plain-text.ts';
import { documentEmpty, unsupportedDocumentType } from './extraction-errors.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';

/**
 * The text formats, from a string: a JSON body's `{text}` (plain text or markdown) and the
 * decoded bytes of an uploaded .txt/.md/.html/.csv/.json. A document with no text at all is
 * `document_empty`.
 */
export function extractText(text: string, format: DocumentFormat, param: string | null = 'text'): ExtractedDocument {
  const normalized = text.replace(/^\uFEFF/u, '').replace(/\r\n?/gu, '\n');
  let document: ExtractedDocument;
  try {
    document = extractFormat(normalized, format);
  } catch (error) {
    // The extractors blame the uploaded `file`; text that came in a JSON body is that body's field.
    if (error instanceof ApiError && error.param === 'file' && param !== 'file') throw new ApiError({ ...error.toOptions(), param, cause: error });
    throw error;
  }
  return requireText(document, param);
}

function extractFormat(text: string, format: DocumentFormat): ExtractedDocument {
  switch (format) {
    case 'text':
      return extractPlainText(text);
    case 'markdown':
      return extractMarkdown(text);
    case 'html':
      return extractHtml(text);
    case 'csv':
      return extractCsv(text);
    case 'json':
      return extractJson(text);
    case 'pdf':
    case 'docx':
      throw unsupportedDocumentType(`A ${format === 'pdf' ? 'PDF' : 'Word document'} is a binary file: upload the file itself, not its text.`, 'format');
  }
}

/** `document` if it has any text; else 422 `document_empty`. */
export function requireText(document: ExtractedDocument, param: string | null = 'file'): ExtractedDocument {
  if (document.blocks.some((block) => block.text.trim() !== '')) return document;
  const why = document.format === 'pdf' ? ' (a scanned PDF has images of pages, not text; run OCR on it first)' : '';
  throw documentEmpty(`The document has no text${why}.`, param);
}

/**
 * The text of a text file's bytes, or null when they are not text. UTF-8 (a BOM is dropped),
 * UTF-16 when a BOM says so, and Windows-1252 for older files that are not UTF-8 but hold no
 * binary. Bytes with NULs or many control characters are binary.
 */
export function decodeDocumentText(bytes: Uint8Array): string | null {
  let text: string | null = null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = decode('utf-16le', bytes);
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = decode('utf-16be', bytes);
  else {
    text = decode('utf-8', bytes);
    if (text === null && !bytes.includes(0)) text = decode('windows-1252', bytes);
  }
  if (text === null || looksBinary(text)) return null;
  return text.replace(/\r\n?/gu, '\n');
}

function decode(encoding: string, bytes: Uint8Array): string | null {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** NUL anywhere, or more than 1 in 100 characters a control other than tab, newline, form feed. */
function looksBinary(text: string): boolean {
  if (text.includes('\u0000')) return true;
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) || c === 0x7f) controls++;
  }
  return controls > text.length / 100;
}
