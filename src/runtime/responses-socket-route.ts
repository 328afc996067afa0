import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { ResponsesSocketSession } from './responses-socket-session.ts';

export interface ResponsesSocketRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
  /** Largest message a client may send, in bytes (the daemon's body limit): a larger one closes the connection with 1009. */
  maxMessageBytes: number;
  /** Open Responses' 60 minutes unless a test says otherwise. */
  connectionLimitMs?: number | undefined;
}

/**
 * `GET /v1/responses` with `Upgrade: websocket`: Open Responses' WebSocket mode
 * (responses-socket-session.ts). The upgrade request passes the daemon's onRequest guards like
 * any request (loopback Host and Origin, developer keys, draining) before it is accepted, so a
 * page on a foreign origin cannot open a connection. A plain GET is told to upgrade.
 */
export async function responsesSocketRoute(app: FastifyInstance, options: ResponsesSocketRouteOptions): Promise<void> {
  const sessions = new Set<ResponsesSocketSession>();
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
      });
      sessions.add(session);
      socket.once('close', () => sessions.delete(session));
    },
  });
}
