import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../shared/api-error.ts';
import { openAIErrorBody } from './openai-error-handler.ts';

/**
 * Node emits `clientError` again for every chunk that reaches a parser already in error, and
 * again at end of stream: a socket is answered once.
 */
const answered = new WeakSet<Duplex>();

/**
 * How long a socket we have answered and half-closed may keep sending before it is destroyed.
 * Destroying it while the client is still sending would make the kernel answer with RST, and a
 * client that gets RST before reading loses our response; the rest of what it sends is read
 * and discarded (the parser is dead) until it closes or this runs out.
 */
const LINGER_MS = 2_000;

function badRequest(message: string): ApiError {
  return ApiError.invalidRequest(message, null, 'invalid_http_request');
}

/**
 * Node forwards every socket error here too (ECONNRESET, EPIPE, ETIMEDOUT): those sockets are
 * dead or dying and get no answer. Only what the client sent wrong, or too slowly, does.
 */
function isRequestError(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('HPE_') || code === 'ERR_HTTP_REQUEST_TIMEOUT');
}

/** A TLS ClientHello (record type 22, version 3.x) sent to this plain-HTTP port. */
function looksLikeTls(rawPacket: unknown): boolean {
  return Buffer.isBuffer(rawPacket) && rawPacket.length >= 2 && rawPacket[0] === 0x16 && rawPacket[1] === 0x03;
}

/**
 * The envelope for an error raised while Node parses a request (llhttp's `HPE_*` codes) or
 * while the request is still arriving. Messages are fixed text or llhttp's own reason, never
 * the client's bytes. Every parse error is a 400 `invalid_http_request` but for sizes (413,
 * 431) and the request timeout (408).
 */
export function clientErrorToApiError(error: Error & { code?: string; reason?: string; rawPacket?: unknown }): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError({
        status: 408,
        type: 'invalid_request_error',
        code: 'request_timeout',
        message: 'The request was not received in full within the time allowed (--request-timeout); the connection is closed.',
      });
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError({
        status: 431,
        type: 'invalid_request_error',
        code: 'headers_too_large',
        message: `The request line and headers are larger than the ${maxHeaderSize} bytes the server accepts.`,
      });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ApiError.tooLarge('The chunk extensions of the chunked body are larger than the server accepts.', null, 'chunk_extensions_too_large');
    case 'HPE_INVALID_METHOD':
      return badRequest(
        looksLikeTls(error.rawPacket)
          ? 'This is a plain-HTTP server and received a TLS handshake: use http://, not https://.'
          : 'The request line does not start with a known HTTP method (the API uses GET, HEAD, POST and OPTIONS).',
      );
    default:
      // llhttp's reasons are fixed strings that name the fault precisely ("Transfer-Encoding
      // can't be present with Content-Length", "Invalid header token", ...).
      return badRequest(
        typeof error.reason === 'string' && error.reason.length > 0 && error.reason.length <= 200
          ? `Malformed HTTP request: ${error.reason}.`
          : 'Malformed HTTP request.',
      );
  }
}

/** The body an error is answered with: the local runtime's OpenAI envelope, or the hosted tier's. */
export type ErrorEnvelope = (error: ApiError) => unknown;

/** A complete HTTP/1.1 response carrying the envelope, for a socket no ServerResponse owns. */
export function rawErrorResponse(error: ApiError, envelope: ErrorEnvelope = openAIErrorBody): string {
  const body = JSON.stringify(envelope(error));
  const lines = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  if (error.retryAfterSeconds !== undefined) lines.push(`Retry-After: ${Math.max(1, Math.ceil(error.retryAfterSeconds))}`);
  for (const [name, value] of Object.entries(error.headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Sends `response` and closes the connection. With `linger`, only our side is closed at first
 * and whatever the client still sends is read and discarded until it closes too (or LINGER_MS
 * passes), so the response is not lost to a reset; without, the socket is destroyed once the
 * response is handed to the kernel.
 */
export function endAndClose(socket: Duplex, response: string, linger: boolean): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end(response, linger ? undefined : () => socket.destroy());
}

/** The ServerResponse Node has attached to this socket, if one is in flight (Node's own check). */
function inFlightResponse(socket: Duplex): { headersSent: boolean } | undefined {
  return (socket as Duplex & { _httpMessage?: { headersSent: boolean } | null })._httpMessage ?? undefined;
}

/**
 * The `clientError` listener of every server the daemon listens on: answers in the JSON
 * envelope what Node would answer with an empty or Fastify-shaped body. Follows Node's own
 * listener: nothing is written once a response has started on the socket (that would corrupt
 * it), and a socket that failed (reset, broken pipe) is only cleaned up.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, envelope: ErrorEnvelope = openAIErrorBody): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (!isRequestError(error.code) || socket.destroyed) {
    socket.destroy();
    return;
  }
  const inFlight = inFlightResponse(socket);
  if (!socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const response = rawErrorResponse(clientErrorToApiError(error), envelope);
  // A parse error kills the parser, so lingering is safe. A timeout leaves it alive (more bytes
  // could still reach a route after our 408), and a response pending for an earlier request
  // would be written after ours: there, close at once, as Node does (a client that timed out
  // has stalled, so no data of its is there for a reset to discard).
  endAndClose(socket, response, error.code !== 'ERR_HTTP_REQUEST_TIMEOUT' && inFlight === undefined);
}
