import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/api-error.ts';

/**
 * Once shutdown begins, the listeners stop accepting connections, but a client may still send
 * new requests on a kept-alive socket: answer those 503 and close the socket, and mark
 * responses still in flight `Connection: close` so clients reconnect elsewhere (or later).
 */
export function installDraining(app: FastifyInstance, draining: AbortSignal): void {
  app.addHook('onRequest', async (_request, reply) => {
    if (!draining.aborted) return;
    reply.header('connection', 'close');
    throw new ApiError({
      status: 503, type: 'server_error', code: 'server_shutting_down',
      message: 'The daemon is shutting down and takes no new requests.', retryAfterSeconds: 1,
    });
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (draining.aborted) reply.header('connection', 'close');
    return payload;
  });
}
