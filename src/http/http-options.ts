import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';

/**
 * Answers a plain `OPTIONS` (RFC 9110 §9.3.7: what may I do with this resource?) with 204 and
 * `Allow`, and `OPTIONS *` with every method the server serves. A CORS preflight (Origin and
 * Access-Control-Request-Method) is left to @fastify/cors, which would otherwise refuse any
 * other OPTIONS with a plain-text 400 `Invalid Preflight Request`. Install before the routes
 * (to see them registered) and before cors (to answer first).
 */
export function installHttpOptions(app: FastifyInstance): void {
  // OPTIONS is left out: cors's wildcard OPTIONS route matches every path.
  const served = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) if (method !== 'OPTIONS') served.add(method);
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS') return undefined;
    if (request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined) return undefined;
    const path = request.url === '*' ? '*' : request.url.split(/[?#]/, 1)[0]!;
    // The router is shared by every plugin, so the root instance finds every route.
    const allowed = path === '*' ? [...served] : [...served].filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length === 0) throw ApiError.notFound(`No route for OPTIONS ${truncateInput(path)}.`, 'unknown_route');
    return reply.code(204).header('allow', [...allowed, 'OPTIONS'].join(', ')).send();
  });
}
