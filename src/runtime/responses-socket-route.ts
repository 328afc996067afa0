import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import type { ResponseStore } from '../openai/response-store.ts';
import { ApiError } from '../shared/api-error.ts';
import { ResponsesSocketSession } from './responses-socket-session.ts';

export interface ResponsesSocketRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  /** Largest message a client may send, in bytes (the daemon's body limit): a larger one closes the connection with 1009. */
  maxMessageBytes: number;
  /** Open Responses' 60 minutes unless a test says otherwise. */
  connectionLimitMs?: number | undefined;
  /** Connections open at once; an upgrade beyond is refused with 503 (MAX_SOCKET_CONNECTIONS unless a test says otherwise). */
  maxConnections?: number | undefined;
  /** The responses store (response-store.ts), shared with HTTP; absent, WebSocket mode keeps only its connections' memory. */
  store?: ResponseStore | undefined;
}

/**
 * Connections open at once. Each may hold its remembered responses (responses-memory.ts: 32 Mi
 * characters at most), so the count is what bounds the daemon's memory for WebSocket mode; 32
 * is far above what one user's agents open on a loopback daemon.
 */
export const MAX_SOCKET_CONNECTIONS = 32;

/**
 * `GET /v1/responses` with `Upgrade: websocket`: Open Responses' WebSocket mode
 * (responses-socket-session.ts). The upgrade request passes the daemon's onRequest guards like
 * any request (loopback Host and Origin, developer keys, draining) before it is accepted, so a
 * page on a foreign origin cannot open a connection. A plain GET is told to upgrade.
 */
export async function responsesSocketRoute(app: FastifyInstance, options: ResponsesSocketRouteOptions): Promise<void> {
  const sessions = new Set<ResponsesSocketSession>();
  const maxConnections = options.maxConnections ?? MAX_SOCKET_CONNECTIONS;
  await app.register(websocket, {
    options: { maxPayload: options.maxMessageBytes, perMessageDeflate: false },
    // Shutdown: idle connections close now, busy ones once their turn has ended (the shutdown
    // signal ends it at the close of the grace period).
    preClose(done) {
      for (const session of sessions) session.close(1001, 'server shutting down');
      done();
    },
  });
  app.route({
    method: 'GET',
    url: '/responses',
    // @fastify/websocket answers HEAD on a WebSocket route with a bare 404; without the HEAD
    // route the request gets the daemon's answer for any path without one, in the envelope.
    exposeHeadRoute: false,
    // Refused before the upgrade, so the client reads an HTTP answer in the envelope.
    preHandler: async (request) => {
      if (request.ws && sessions.size >= maxConnections) {
        throw ApiError.busy(`${maxConnections} WebSocket connections are open, the most this daemon keeps at once; close one or retry shortly.`, 1, 503, 'too_many_connections');
      }
    },
    handler: async () => {
      throw new ApiError({
        status: 426, type: 'invalid_request_error', code: 'upgrade_required',
        message: 'GET /v1/responses is WebSocket mode: connect with Upgrade: websocket (or POST /v1/responses over HTTP).',
        headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
      });
    },
    wsHandler: (socket, request) => {
      const session = new ResponsesSocketSession(socket, {
        models: options.models,
        shutdownSignal: options.shutdownSignal,
        connectionLimitMs: options.connectionLimitMs,
        log: request.log,
        store: options.store,
      });
      sessions.add(session);
      socket.once('close', () => sessions.delete(session));
    },
  });
}
