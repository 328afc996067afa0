import { ApiError } from '../shared/api-error.ts';

/**
 * The errors a document can meet on its way from bytes to blocks. Each is the client's
 * problem (a 4xx with a stable code), never a 500: a parser's own exception is caught where the
 * parser is called and becomes one of these.
 */

/** 415: a format spaces do not read (an image, an executable, a spreadsheet). */
export function unsupportedDocumentType(message: string, param: string | null = 'file'): ApiError {
  return new ApiError({ status: 415, type: 'invalid_request_error', code: 'unsupported_document_type', message, param });
}

/** 415: the bytes are one format and the name or content type says another (a `.pdf` that is text). */
export function documentTypeMismatch(message: string, param: string | null = 'file'): ApiError {
  return new ApiError({ status: 415, type: 'invalid_request_error', code: 'document_type_mismatch', message, param });
}

/** 422: the format is right but the file cannot be read (a corrupt PDF, a broken CSV). */
export function documentUnreadable(message: string, cause?: unknown, param: string | null = 'file'): ApiError {
  return new ApiError({ status: 422, type: 'invalid_request_error', code: 'document_unreadable', message, param, cause });
}

/** 422: the file was read and holds no text (a scanned PDF without a text layer, whitespace). */
export function documentEmpty(message: string, param: string | null = 'file'): ApiError {
  return new ApiError({ status: 422, type: 'invalid_request_error', code: 'document_empty', message, param });
}

/** 413: the upload itself is over the byte limit. */
export function documentTooLarge(message: string, param: string | null = 'file'): ApiError {
  return ApiError.tooLarge(message, param, 'document_too_large');
}

/** 413: a small file that unpacks into far more (a zip bomb, a PDF whose streams inflate without end). */
export function documentExpandsTooFar(message: string, param: string | null = 'file'): ApiError {
  return ApiError.tooLarge(message, param, 'document_expands_too_far');
}

/**
 * 422: reading the file needs more memory than extraction is allowed (a PDF stream that inflates
 * to gigabytes, XML with millions of elements, a markdown table of a million empty cells). The
 * bound covers buffers and native memory, not only the JavaScript heap (extraction-worker.ts).
 */
export function documentTooComplex(message: string, param: string | null = 'file'): ApiError {
  return new ApiError({ status: 422, type: 'invalid_request_error', code: 'document_too_complex', message, param });
}
