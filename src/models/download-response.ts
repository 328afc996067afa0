import { basename } from 'node:path';
import { PullError } from './pull-error.ts';

/** Reading a download server's answer: its refusals, its Content-Range, its numeric headers. */

export function defaultHttpError(response: Response, url: URL): PullError {
  const status = response.status;
  // origin + path: a signed URL's query (or credentials) stays out of messages.
  if (status === 404 || status === 410) return new PullError('file_not_found', `${url.origin}${url.pathname} not found (${status})`);
  if (status === 401 || status === 403) return new PullError('unauthorized', `${url.origin} refused the download (${status})`);
  return new PullError('http', `${url.origin} answered ${status} for ${basename(url.pathname)}`, { retryable: status >= 500 || status === 429 });
}

// Parses `bytes START-END/TOTAL` (206) or `bytes */TOTAL` (416).
export function parseContentRange(value: string | null): { start: number | undefined; total: number | undefined } {
  const m = value === null ? null : /^bytes\s+(?:(\d+)-\d+|\*)\/(\d+|\*)$/i.exec(value.trim());
  if (m === null) return { start: undefined, total: undefined };
  return { start: m[1] === undefined ? undefined : Number(m[1]), total: m[2] === '*' ? undefined : Number(m[2]) };
}

export function headerNumber(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}
