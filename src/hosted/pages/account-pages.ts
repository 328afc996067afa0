import type { FastifyInstance } from 'fastify';
import { PAGE_HEADERS, readPage } from './page-assets.ts';

/** The page paths: the contract's key page and the assets it and the sign-in page load. */
export const API_KEYS_PAGE_PATH = '/settings/api-keys';

/**
 * `/settings/api-keys` and its assets, mounted at the root (not under `/api`). The page is static:
 * whether someone is signed in is for its script to learn from `/api/keys`, so nothing here
 * reads the session.
 */
export async function accountPages(app: FastifyInstance): Promise<void> {
  const assets = new Map([
    ['api-keys.js', { type: 'text/javascript; charset=utf-8', body: readPage('api-keys.js') }],
    ['sign-in.js', { type: 'text/javascript; charset=utf-8', body: readPage('sign-in.js') }],
    ['pages.css', { type: 'text/css; charset=utf-8', body: readPage('pages.css') }],
  ]);
  const page = readPage('api-keys.html');
  app.get(API_KEYS_PAGE_PATH, async (_request, reply) => reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(page));
  app.get<{ Params: { name: string } }>('/settings/assets/:name', async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (asset === undefined) return reply.callNotFound();
    return reply.headers(PAGE_HEADERS).type(asset.type).send(asset.body);
  });
}
