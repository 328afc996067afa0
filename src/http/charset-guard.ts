import type { FastifyInstance } from 'fastify';
import { MIMEType } from 'node:util';
import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';

const UTF8_LABELS = new Set(['utf-8', 'utf8']);

/** Fastify never reads a body for these; every other method's body is parsed when it has a Content-Type. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE']);

function unsupportedMediaType(message: string, code: string): ApiError {
  return new ApiError({ status: 415, type: 'invalid_request_error', code, message });
}

/** The lower-cased names of a media type's parameters, in order (`;` inside quotes is text). */
function parameterNames(contentType: string): string[] {
  const segments: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < contentType.length; i++) {
    const c = contentType[i]!;
    if (quoted && c === '\\') {
      current += c + (contentType[++i] ?? '');
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      segments.push(current);
      current = '';
    } else current += c;
  }
  segments.push(current);
  return segments.slice(1).map((segment) => segment.split('=', 1)[0]!.trim().toLowerCase());
}

/**
 * The error for a request body declared in a charset other than UTF-8, or undefined when the
 * body may be read. Fastify decodes every body as UTF-8 whatever the header says, so a UTF-16
 * body would be read as garbage (or worse, as different text than the client meant); no
 * charset means UTF-8 (RFC 8259). The header is parsed by Node's WHATWG MIME parser, which
 * handles quoting, case and stray parameters as browsers do.
 */
export function charsetError(contentType: string): ApiError | undefined {
  // The WHATWG parser keeps the first of repeated parameters; another reader may take the last.
  if (parameterNames(contentType).filter((name) => name === 'charset').length > 1) {
    return unsupportedMediaType('The Content-Type names more than one charset; send the body as UTF-8 with one charset (charset=utf-8) or none.', 'unsupported_charset');
  }
  let mime: MIMEType;
  try {
    mime = new MIMEType(contentType);
  } catch {
    return unsupportedMediaType(`Content-Type '${truncateInput(contentType)}' is not a valid media type; send application/json.`, 'unsupported_media_type');
  }
  const charset = mime.params.get('charset');
  if (charset === null || UTF8_LABELS.has(charset.toLowerCase())) return undefined;
  return unsupportedMediaType(
    `Charset '${truncateInput(charset)}' is not supported; send the body as UTF-8 (charset=utf-8, or no charset).`,
    'unsupported_charset',
  );
}

/** Content-Type values already found acceptable: clients send the same one on every request. */
const MAX_ACCEPTED = 64;

/** Refuses a non-UTF-8 body with 415 before any of it is read, on every route that takes one. */
export function installCharsetGuard(app: FastifyInstance): void {
  const accepted = new Set<string>();
  app.addHook('onRequest', async (request) => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined || BODYLESS_METHODS.has(request.method) || request.is404) return;
    if (accepted.has(contentType)) return;
    const error = charsetError(contentType);
    if (error !== undefined) throw error;
    if (accepted.size >= MAX_ACCEPTED) accepted.clear();
    accepted.add(contentType);
  });
}
