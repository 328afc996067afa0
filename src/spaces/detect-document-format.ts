import { documentTypeMismatch, unsupportedDocumentType } from './extraction-errors.ts';
import { decodeDocumentText } from './extract-text.ts';
import { checkZipClaims, listZipEntries, zipLimitsFor } from './guarded-zip.ts';
import type { DocumentFormat } from './space-document.ts';
import { filenameExtension } from './upload-filename.ts';

/**
 * Which format an upload is. The bytes decide first (a PDF starts `%PDF-`, a DOCX is a zip with
 * `word/document.xml`), then the file name's extension, then the content type. Where the bytes
 * are one binary format and the name says another (a `.docx` that is a PDF), or the name or
 * type says PDF or DOCX of bytes that are not (a `.pdf` that is text), that is an error:
 * guessing would index garbage or hide a mistake. A content type that merely disagrees with
 * a PDF's or DOCX's own bytes yields to them.
 */

export interface FormatHints {
  filename?: string | undefined;
  contentType?: string | undefined;
}

const EXTENSIONS = new Map<string, DocumentFormat>([
  ['txt', 'text'], ['text', 'text'],
  ['md', 'markdown'], ['markdown', 'markdown'], ['mdown', 'markdown'], ['mkd', 'markdown'],
  ['html', 'html'], ['htm', 'html'], ['xhtml', 'html'],
  ['pdf', 'pdf'], ['docx', 'docx'],
  ['csv', 'csv'], ['tsv', 'csv'],
  ['json', 'json'],
]);

/** Document formats spaces do not read, by extension, for a clear refusal instead of a text guess. */
const UNSUPPORTED_EXTENSIONS = new Map<string, string>([
  ['doc', 'a legacy Word document (.doc): save it as .docx'], ['rtf', 'an RTF document'], ['odt', 'an OpenDocument text'],
  ['xls', 'a spreadsheet'], ['xlsx', 'a spreadsheet (export it as CSV)'], ['ods', 'a spreadsheet'],
  ['ppt', 'a presentation'], ['pptx', 'a presentation'], ['odp', 'a presentation'], ['epub', 'an e-book'],
  ['pages', 'a Pages document'], ['numbers', 'a Numbers spreadsheet'], ['key', 'a Keynote presentation'],
]);

const CONTENT_TYPES = new Map<string, DocumentFormat>([
  ['text/plain', 'text'], ['text/markdown', 'markdown'], ['text/x-markdown', 'markdown'],
  ['text/html', 'html'], ['application/xhtml+xml', 'html'],
  ['application/pdf', 'pdf'], ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['text/csv', 'csv'], ['application/csv', 'csv'], ['text/tab-separated-values', 'csv'],
  ['application/json', 'json'], ['text/json', 'json'],
]);

/** Binary signatures of files that are not documents, named so the refusal says what was sent. */
const SIGNATURES: { bytes: number[]; offset?: number; what: string }[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' },
  { bytes: [0x52, 0x49, 0x46, 0x46], what: 'a RIFF file (WebP, WAV, AVI)' },
  { bytes: [0x49, 0x49, 0x2a, 0x00], what: 'a TIFF image' },
  { bytes: [0x4d, 0x4d, 0x00, 0x2a], what: 'a TIFF image' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'an ELF executable' },
  { bytes: [0x4d, 0x5a], what: 'a Windows executable' },
  { bytes: [0xcf, 0xfa, 0xed, 0xfe], what: 'a Mach-O executable' },
  { bytes: [0x00, 0x61, 0x73, 0x6d], what: 'a WebAssembly module' },
  { bytes: [0x1f, 0x8b], what: 'a gzip archive' },
  { bytes: [0x42, 0x5a, 0x68], what: 'a bzip2 archive' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: 'an xz archive' },
  { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], what: 'a 7-Zip archive' },
  { bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], what: 'a RAR archive' },
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], what: 'a legacy Office file (.doc, .xls): save it as .docx' },
  { bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66], what: 'an SQLite database' },
  { bytes: [0x49, 0x44, 0x33], what: 'an MP3 file' },
  { bytes: [0x66, 0x74, 0x79, 0x70], offset: 4, what: 'an MP4/QuickTime file' },
];

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];
/** The PDF spec lets a header sit anywhere in the first 1,024 bytes, and some writers put junk first. */
const PDF_HEADER_WINDOW = 1024;

export async function detectDocumentFormat(bytes: Uint8Array, hints: FormatHints = {}): Promise<DocumentFormat> {
  const claim = claimedFormat(hints);
  const label = hints.filename !== undefined && filenameExtension(hints.filename) !== '' ? `.${filenameExtension(hints.filename)} file` : 'file';
  const sniffed = await sniffBinary(bytes, claim.format);
  if (sniffed === 'pdf' || sniffed === 'docx') {
    // A content type is often a client's guess (a form posts what the OS said); a name is the user's word.
    if (claim.format !== undefined && claim.format !== sniffed && claim.from === 'name') {
      throw documentTypeMismatch(`The ${label} is ${sniffed === 'pdf' ? 'a PDF' : 'a Word document'}, not ${describe(claim.format)} as its ${claim.from} says.`);
    }
    return sniffed;
  }
  if (sniffed !== null) {
    if (claim.format === 'pdf' || claim.format === 'docx') throw documentTypeMismatch(`The ${label} is ${sniffed}, not ${describe(claim.format)}.`);
    throw unsupportedDocumentType(`The ${label} is ${sniffed}; spaces read text, markdown, HTML, PDF, DOCX, CSV and JSON.`);
  }
  if (claim.format === 'pdf') throw documentTypeMismatch(`The ${label} is not a PDF: it has no %PDF- header.`);
  if (claim.format === 'docx') throw documentTypeMismatch(`The ${label} is not a Word document: it is not a zip archive.`);
  if (claim.unsupported !== undefined) throw unsupportedDocumentType(`The ${label} is ${claim.unsupported}; spaces read text, markdown, HTML, PDF, DOCX, CSV and JSON.`);
  return claim.format ?? 'text';
}

/** What the name, or failing that the content type, says the file is. */
function claimedFormat(hints: FormatHints): { format?: DocumentFormat; from?: string; unsupported?: string } {
  const extension = hints.filename === undefined ? '' : filenameExtension(hints.filename);
  const byExtension = EXTENSIONS.get(extension);
  if (byExtension !== undefined) return { format: byExtension, from: 'name' };
  const unsupported = UNSUPPORTED_EXTENSIONS.get(extension);
  if (unsupported !== undefined) return { unsupported };
  const mediaType = (hints.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const byType = CONTENT_TYPES.get(mediaType) ?? (mediaType.endsWith('+json') ? 'json' : undefined);
  return byType === undefined ? {} : { format: byType, from: 'content type' };
}

/** `pdf`, `docx`, what another binary file is (a phrase), or null for anything else. */
async function sniffBinary(bytes: Uint8Array, claim: DocumentFormat | undefined): Promise<'pdf' | 'docx' | string | null> {
  if (startsWith(bytes, PDF_MAGIC)) return 'pdf';
  // Further in, `%PDF-` may as well be a text file quoting it: only a file that does not say it is text counts.
  if ((claim === undefined || claim === 'pdf') && indexOf(bytes.subarray(0, PDF_HEADER_WINDOW), PDF_MAGIC) !== -1 && decodeDocumentText(bytes) === null) return 'pdf';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return sniffZip(bytes);
  let isText: boolean | undefined;
  for (const signature of SIGNATURES) {
    if (!startsWith(bytes, signature.bytes, signature.offset ?? 0)) continue;
    // A signature of printable letters (`MZ`, `ID3`, `GIF8`) also starts ordinary sentences.
    if (signature.bytes.every((b) => b >= 0x20 && b < 0x7f)) {
      isText ??= decodeDocumentText(bytes) !== null;
      if (isText) continue;
    }
    return signature.what;
  }
  return null;
}

/** A zip is a DOCX when it holds word/document.xml; its claims are checked here, before any inflating. */
async function sniffZip(bytes: Uint8Array): Promise<'docx' | string> {
  const limits = zipLimitsFor(bytes.byteLength);
  const entries = await listZipEntries(bytes, limits.maxEntries);
  const names = new Set(entries.map((entry) => entry.name));
  if (names.has('word/document.xml')) {
    checkZipClaims(entries, limits);
    return 'docx';
  }
  if (names.has('xl/workbook.xml')) return 'an Excel spreadsheet (export it as CSV)';
  if (names.has('ppt/presentation.xml')) return 'a PowerPoint presentation';
  if (names.has('mimetype') && names.has('content.xml')) return 'an OpenDocument file';
  if (names.has('META-INF/container.xml')) return 'an e-book (EPUB)';
  return 'a zip archive';
}

function describe(format: DocumentFormat): string {
  const names: Record<DocumentFormat, string> = {
    text: 'plain text', markdown: 'markdown', html: 'HTML', pdf: 'a PDF', docx: 'a Word document', csv: 'CSV', json: 'JSON',
  };
  return names[format];
}

function startsWith(bytes: Uint8Array, prefix: number[], offset = 0): boolean {
  if (bytes.length < offset + prefix.length) return false;
  return prefix.every((b, i) => bytes[offset + i] === b);
}

function indexOf(haystack: Uint8Array, needle: number[]): number {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(Buffer.from(needle));
}
