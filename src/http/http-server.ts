import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import { ApiError } from '../shared/api-error.ts';
import { answerClientError, endAndClose, rawErrorResponse, type ErrorEnvelope } from './client-error-handler.ts';
import { openAIErrorBody } from './openai-error-handler.ts';

/**
 * What the server needs of a TLS layer (transport/transport-security.ts is the one there is):
 * its settings, and a hook to watch the handshakes. Named here, by shape, so this kit does
 * not depend on the transport room, which uses the kit's error answers.
 */
export interface TlsLayer {
  tlsOptions(): TlsOptions;
  track(server: HttpsServer, envelope: ErrorEnvelope): void;
}

/**
 * Node's HTTP server settings for the daemon. `requestTimeout` cuts off clients that never
 * finish sending a request (slowloris); Node only checks it every `connectionsCheckingInterval`
 * (30 s by default), so the interval follows the timeout. Responses (long streams) are not
 * bounded by it.
 *
 * Every server the daemon listens on is made here, so each answers what Node would answer
 * itself (parse errors, timeouts, `Expect`, `CONNECT`) in the JSON envelope too. With
 * `transport` (--pqc-transport) it is an HTTPS server with the transport's TLS settings.
 */
export function createHttpServer(requestTimeoutMs: number, handler: RequestListener, envelope: ErrorEnvelope = openAIErrorBody, transport?: TlsLayer): Server {
  const options: ServerOptions = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs === 0 ? 60_000 : Math.min(60_000, requestTimeoutMs),
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: requestTimeoutMs === 0 ? 30_000 : Math.max(100, Math.min(30_000, Math.floor(requestTimeoutMs / 4))),
    // Node answers a missing Host with an empty 400; the loopback guard answers it in the envelope.
    requireHostHeader: false,
  };
  let server: Server;
  if (transport === undefined) {
    server = createServer(options, handler);
  } else {
    const https = createHttpsServer({ ...options, ...transport.tlsOptions() }, handler);
    transport.track(https, envelope);
    // An https.Server is an http.Server in all the daemon uses (listen, close, connection
    // tracking, the events below); Node's types keep the two apart.
    server = https as unknown as Server;
  }
  server.on('clientError', (error: Error & { code?: string }, socket) => answerClientError(error, socket, envelope));
  // Without a listener Node answers an `Expect` other than 100-continue with an empty 417.
  server.on('checkExpectation', (_request, response) => {
    const error = new ApiError({
      status: 417,
      type: 'invalid_request_error',
      code: 'expectation_failed',
      message: 'The only Expect this server honours is 100-continue.',
    });
    const body = JSON.stringify(envelope(error));
    // The client may send its body anyway; closing keeps it from being read as a next request.
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
  // Without a listener Node drops a CONNECT connection without a word (e.g. a client whose
  // HTTPS proxy setting points here).
  server.on('connect', (_request, socket) => {
    const error = new ApiError({
      status: 405,
      type: 'invalid_request_error',
      code: 'method_not_allowed',
      message: 'CONNECT is not supported: the daemon is not a proxy.',
      headers: { Allow: 'GET, HEAD, POST, OPTIONS' },
    });
    // Node has handed the socket over and no longer listens for its errors: a reset from the
    // client would otherwise be an uncaught exception.
    socket.on('error', () => {});
    socket.resume();
    endAndClose(socket, rawErrorResponse(error, envelope), true);
  });
  return server;
}
