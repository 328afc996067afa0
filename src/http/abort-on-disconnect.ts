import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal that fires when the client goes away before the response is complete, so
 * generation stops and its sequence is freed instead of decoding for nobody.
 */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
