import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built console (committed; `npm run build:console` writes it from console/, see docs/console.md). */
export const CONSOLE_DIST = fileURLToPath(new URL('./dist/', import.meta.url));

/**
 * Only this origin's own files and API: no inline script or style element, no eval, nothing
 * external (the console must work offline and a page must not leak what it shows). `img-src
 * data:` is for the empty favicon, which saves the browser a request that would 404.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Asset names carry a content hash (Vite's `[name]-[hash]`): a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The cache rule for a file served from `root`: hashed files under `root/assets/` for a year,
 * everything else (index.html) revalidated. Decided on the path inside `root`, not the absolute
 * one: svc installed under some folder named `assets` must not cache index.html for a year.
 */
export function cacheControlFor(root: string, filePath: string): string {
  const [top] = relative(root, filePath).split(sep);
  return top === 'assets' ? IMMUTABLE : 'no-cache';
}

/** The console's security headers on every answer of `app`'s scope (the CSP above and its companions). */
function installConsoleHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });
}

/**
 * Serves the console at `/` (index.html, revalidated on every load so a new build is picked up)
 * and its hashed assets under `/assets/` (cached for a year). Registered on the local app, so
 * the loopback guard (Host and Origin) and the error envelope cover it like every API route.
 * `wildcard: false` registers one route per file found at start: any other path stays the
 * daemon's own 404 in the envelope, and no path can reach outside the folder.
 */
export async function consoleRoutes(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  // `root`: another copy of the built console (tests); the committed build by default.
  const root = options.root ?? CONSOLE_DIST;
  // The page must load before it can ask for a developer key (--require-developer-key): its
  // files hold no data, so every caller may fetch them; the API calls it makes need the key.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, keyFree: true };
  });
  installConsoleHeaders(app);
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    // The hosted usage page is `svc hosted`'s (hostedConsoleRoutes), not the local daemon's.
    allowedPath: (pathName) => pathName !== '/usage.html',
    decorateReply: false,
    cacheControl: false,
    setHeaders: (reply, path) => {
      reply.header('cache-control', cacheControlFor(root, path));
    },
  });
}

/** Where `svc hosted` serves the usage page: under the hosted prefix `/api`, beside the API it reads. */
export const HOSTED_CONSOLE_PREFIX = '/api/console';

/**
 * The hosted usage page, `usage.html` of the same build, at `/usage` (mounted under
 * HOSTED_CONSOLE_PREFIX) with the build's hashed assets under `/assets/`. The page is static
 * (whether someone is signed in is for its script to learn from the API), served with the
 * console's CSP; unknown paths are the hosted server's 404 in its envelope.
 */
export async function hostedConsoleRoutes(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? CONSOLE_DIST;
  const page = await readFile(join(root, 'usage.html'));
  installConsoleHeaders(app);
  app.get('/usage', async (request, reply) => {
    // The hosted server ignores trailing slashes, but the page's URLs are relative: under
    // `/usage/` they would resolve one level too deep. Send the browser to `/usage` instead
    // (relative, so a proxy's path prefix stays; 308 keeps the method, the query string kept).
    const queryAt = request.url.indexOf('?');
    const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    if (path.endsWith('/')) return reply.redirect(`../usage${queryAt === -1 ? '' : request.url.slice(queryAt)}`, 308);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  });
  await app.register(fastifyStatic, {
    root: join(root, 'assets'),
    prefix: '/assets/',
    wildcard: false,
    index: false,
    decorateReply: false,
    cacheControl: false,
    setHeaders: (reply) => {
      reply.header('cache-control', IMMUTABLE);
    },
  });
}
