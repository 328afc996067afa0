import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/** How long a refused upgrade's socket may take to read the answer before it is destroyed. */
const LINGER_MS = 5_000;

/**
 * With a WebSocket route the server hands every `Upgrade` request to the router on a raw
 * socket that no HTTP parser watches any more (no keep-alive, no timeouts). When the answer is
 * an HTTP response (a guard refused it, no such route, a plain answer), the socket is ended
 * after it rather than left open; an accepted upgrade hijacks its reply and never gets here.
 */
export function closeRefusedUpgrades(app: FastifyInstance): void {
  app.addHook('onResponse', async (request) => {
    // Node's parser sets `upgrade` on every request it hands to the 'upgrade' event (not in its types).
    if ((request.raw as IncomingMessage & { upgrade?: boolean }).upgrade !== true) return;
    const socket = request.raw.socket;
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
