import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { truncateInput } from '../shared/quote-input.ts';
import { ROUTE_HEADERS } from './descriptors.ts';
import { HostedError } from './hosted-error.ts';

/** The only request headers a browser may send cross-origin: the contract's allow-list. */
export const CORS_ALLOWED_HEADERS: readonly string[] = ['authorization', 'content-type', ...ROUTE_HEADERS];
const ALLOWED = new Set(CORS_ALLOWED_HEADERS);

/** Response headers a browser script may read (rate-limit and backpressure answers). */
const EXPOSED_HEADERS = ['retry-after', 'x-svc-queue-class', 'x-svc-backpressure-state'];

/** Origins compared as browsers send them: scheme://host[:port], lower-cased, no trailing slash. */
function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

export function originAllowed(origins: readonly string[]): (origin: string) => boolean {
  const set = new Set(origins.map(normalizeOrigin));
  return (origin) => set.has('*') || set.has(normalizeOrigin(origin));
}

export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const allowed = originAllowed(origins);
  return {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed(origin)),
    methods: ['GET', 'HEAD', 'POST', 'DELETE'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: EXPOSED_HEADERS,
    // Keys travel in Authorization, never in cookies, so no cross-origin credentials.
    credentials: false,
    maxAge: 600,
  };
}

/**
 * Refuses, in the error envelope, a CORS preflight from an origin not on the list or asking for
 * a header outside the allow-list. @fastify/cors would answer 204 and leave the refusal to the
 * browser; a 403 that says why is clearer for whoever debugs it. Install before cors.
 */
export function installCorsGuard(app: FastifyInstance, origins: readonly string[]): void {
  const allowed = originAllowed(origins);
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (request.method !== 'OPTIONS' || origin === undefined || request.headers['access-control-request-method'] === undefined) return;
    if (!allowed(origin)) {
      throw new HostedError({ status: 403, type: 'permission_error', code: 'cors_origin_not_allowed', message: `Origin ${truncateInput(origin)} may not call this API from a browser (see --cors-origin).` });
    }
    const requested = (request.headers['access-control-request-headers'] ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
    const refused = requested.filter((h) => !ALLOWED.has(h));
    if (refused.length > 0) {
      throw new HostedError({
        status: 403, type: 'permission_error', code: 'cors_header_not_allowed',
        message: `A browser may send only ${CORS_ALLOWED_HEADERS.join(', ')}; refused: ${truncateInput(refused.join(', '))}.`,
      });
    }
  });
}
