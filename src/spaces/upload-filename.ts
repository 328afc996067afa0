import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';

/**
 * A document's file name (a multipart `filename`, a `source`) is only ever a label: svc never
 * writes to it or opens it. Still, a name that climbs out of a folder, names an absolute path
 * or hides control characters is refused rather than shown to the next reader as if it were
 * ordinary: a label that reads `../../etc/passwd` in a citation is a lie either way.
 *
 * Relative folder paths (`notes/2024/plan.md`) are fine: browsers send them for folder uploads.
 */

export const MAX_FILENAME_CHARS = 1024;
const MAX_SEGMENT_CHARS = 255;

// C0 and C1 controls and DEL end up as terminal escapes or invisible breaks in a label; the
// bidirectional overrides and isolates make `invoice‮fdp.exe` display as `invoiceexe.pdf`.
const FORBIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
const FORBIDDEN_CHARS_ALL = new RegExp(FORBIDDEN_CHARS.source, 'gu');
const WINDOWS_DRIVE = /^[A-Za-z]:/;
// A URL's scheme: two letters at least, so a Windows drive (`C:`) is never read as one.
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/** Why `name` is refused as a file name, or null when it is a fine label. */
export function filenameProblem(name: string): string | null {
  if (name.trim() === '') return 'is empty';
  if (name.length > MAX_FILENAME_CHARS) return `is longer than ${MAX_FILENAME_CHARS} characters`;
  if (FORBIDDEN_CHARS.test(name)) return 'contains a control character';
  if (name.startsWith('/') || name.startsWith('\\')) return 'is an absolute path';
  if (WINDOWS_DRIVE.test(name)) return 'is an absolute path (a drive letter)';
  if (name.startsWith('~')) return 'names a home folder';
  const segments = name.split(/[/\\]/);
  for (const segment of segments) {
    if (segment === '..') return 'climbs out of its folder (`..`)';
    if (segment.length > MAX_SEGMENT_CHARS) return `has a part longer than ${MAX_SEGMENT_CHARS} characters`;
  }
  if (segments.at(-1)!.trim() === '' || segments.at(-1) === '.') return 'names a folder, not a file';
  return null;
}

/** The file name as given, or a 400 `invalid_filename` saying what is wrong with it. */
export function validateUploadFilename(name: string, param = 'filename'): string {
  const problem = filenameProblem(name);
  if (problem !== null) throw invalidFilename(`The file name ${quoteLabel(name)} ${problem}.`, param);
  return name;
}

/**
 * A document's `source`: a URL (any scheme; it is a label, never fetched here) or else a file
 * name held to the same rules as an upload's.
 */
export function validateDocumentSource(source: string, param = 'source'): string {
  if (URL_SCHEME.test(source) && URL.canParse(source)) {
    if (source.length > MAX_FILENAME_CHARS) throw invalidFilename(`The source ${quoteLabel(source)} is longer than ${MAX_FILENAME_CHARS} characters.`, param);
    if (FORBIDDEN_CHARS.test(source)) throw invalidFilename(`The source ${quoteLabel(source)} contains a control character.`, param);
    return source;
  }
  const problem = filenameProblem(source);
  if (problem !== null) throw invalidFilename(`The source ${quoteLabel(source)} ${problem}.`, param);
  return source;
}

/** The lower-case extension of a file name's last part (`report.PDF` → `pdf`), or '' when it has none. */
export function filenameExtension(name: string): string {
  const base = name.split(/[/\\]/).at(-1) ?? '';
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

/** The name quoted for an error message, its invisible characters spelled out as escapes. */
function quoteLabel(name: string): string {
  return quoteInput(name).replace(FORBIDDEN_CHARS_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function invalidFilename(message: string, param: string): ApiError {
  return ApiError.invalidRequest(message, param, 'invalid_filename');
}
