import { SVC_VERSION } from '../shared/version.ts';
import { PullError } from './pull-error.ts';

export interface HttpGetOptions {
  /** Headers sent on every hop (Range, If-Range, Accept). */
  headers?: Record<string, string>;
  /** Extra headers for one hop's URL: the hub's token goes to the hub's origin only. */
  headersFor?: (url: URL) => Record<string, string>;
  signal?: AbortSignal | undefined;
  method?: 'GET' | 'HEAD';
}

export interface HttpGetResult {
  response: Response;
  /** The first hop's headers: the hub's `x-linked-etag` / `x-linked-size` sit on its 302, not on the CDN's answer. */
  firstHeaders: Headers;
  url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 8;

/** Network-level failures (no HTTP answer) as one line naming the host and the cause. */
export function networkError(url: URL, error: unknown): PullError {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new PullError('network', `cannot reach ${url.origin}: ${detail}`, { cause: error, retryable: true });
}

/**
 * GET (or HEAD) that follows redirects itself, so each hop's headers are chosen for its own
 * origin: the hub answers file requests with a 302 to a CDN, and the token must not travel
 * there (it would leak, and S3 refuses presigned URLs that carry an Authorization header).
 * An https URL never redirects to plain http.
 */
export async function httpGet(start: URL, options: HttpGetOptions = {}): Promise<HttpGetResult> {
  let url = start;
  let firstHeaders: Headers | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: options.method ?? 'GET',
        redirect: 'manual',
        signal: options.signal ?? null,
        headers: {
          'user-agent': `svc/${SVC_VERSION}`,
          // Byte offsets (Range, resume) only hold for the identity encoding.
          'accept-encoding': 'identity',
          ...options.headers,
          ...options.headersFor?.(url),
        },
      });
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      throw networkError(url, error);
    }
    firstHeaders ??= response.headers;
    if (!REDIRECTS.has(response.status)) return { response, firstHeaders, url };
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (location === null) throw new PullError('http', `${url.origin} answered ${response.status} without a Location header`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new PullError('http', `${url.origin} redirected to an invalid URL`);
    }
    if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new PullError('http', `${url.origin} redirected to a ${next.protocol} URL`);
    if (url.protocol === 'https:' && next.protocol === 'http:') throw new PullError('http', `${url.origin} redirected from https to plain http (${next.origin}); refused`);
    url = next;
  }
  throw new PullError('http', `more than ${MAX_REDIRECTS} redirects from ${start.origin}`);
}
