import { extname } from 'node:path';

/**
 * The URL of the module `name` (no extension) beside `base` (pass `import.meta.url`), for the
 * entry points Node loads by URL: worker threads and child processes. A checkout runs the
 * TypeScript sources and the installed package runs their compiled JavaScript (dist/, see
 * docs/offline-install.md); tsc rewrites the extensions of imports but not of URLs, so the
 * extension follows the calling module's own.
 */
export function siblingModule(name: string, base: string): URL {
  return new URL(`${name}${extname(new URL(base).pathname)}`, base);
}
