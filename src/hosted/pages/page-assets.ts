import { readFileSync } from 'node:fs';

/**
 * The account pages' headers: a strict CSP (only this origin's own scripts, styles and fetches;
 * nothing inline, nothing external), no referrer (a sign-in link's token must not leak in one),
 * never cached, never framed.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/** A file of this folder, read once when the app is built. */
export function readPage(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
}
