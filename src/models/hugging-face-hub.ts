import { z } from 'zod';
import { httpGet } from './http-get.ts';
import { PullError } from './pull-error.ts';

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

/** A file of a hub repository: size and sha256 come from the tree listing (LFS files carry both). */
export interface HubFile {
  path: string;
  size: number | undefined;
  sha256: string | undefined;
}

export interface HubTarget {
  owner: string;
  repo: string;
  revision: string;
  file?: string;
}

// The hub's JSON, parsed rather than trusted (shapes from huggingface.js's api-model / api-index-tree
// types and the huggingface_hub client). Unknown fields are ignored.
const RepoInfoSchema = z.object({
  id: z.string().optional(),
  sha: z.string().optional(),
  siblings: z.array(z.object({ rfilename: z.string() })).optional(),
});

const TreeEntrySchema = z.object({
  type: z.string(),
  path: z.string(),
  size: z.number().nonnegative().optional(),
  lfs: z.object({ oid: z.string(), size: z.number().nonnegative() }).optional(),
});

const SHA256 = /^[0-9a-f]{64}$/;
const MAX_TREE_PAGES = 100;
const API_TIMEOUT_MS = 30_000;

/** A sha256 from an ETag-like header value (`"abc…"`, `W/"abc…"`), or undefined if it is not one. */
export function sha256FromEtag(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const bare = value.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
  return SHA256.test(bare) ? bare : undefined;
}

/**
 * The few Hugging Face hub routes a pull needs: repository info (does it exist, which commit
 * is `main`), the recursive tree (sizes and LFS sha256 of every file) and the file URL
 * (`resolve`). The endpoint is configurable (HF_ENDPOINT) so mirrors work; the token goes to
 * that origin only.
 */
export class HuggingFaceHub {
  readonly endpoint: URL;
  readonly #base: string;
  readonly #token: string | undefined;

  constructor(options: { endpoint?: string | undefined; token?: string | undefined }) {
    const endpoint = options.endpoint === undefined || options.endpoint.trim() === '' ? DEFAULT_HUB_ENDPOINT : options.endpoint.trim();
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new PullError('invalid_reference', `HF_ENDPOINT '${endpoint}' is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PullError('invalid_reference', `HF_ENDPOINT '${endpoint}' is not an http(s) URL`);
    this.endpoint = url;
    this.#base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.#token = options.token === undefined || options.token.trim() === '' ? undefined : options.token.trim();
  }

  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /** The bearer token for the hub's own origin; nothing for any other (the CDN a file redirects to). */
  headersFor = (url: URL): Record<string, string> =>
    this.#token !== undefined && url.origin === this.endpoint.origin ? { authorization: `Bearer ${this.#token}` } : {};

  repoUrl(owner: string, repo: string): string {
    return `${this.#base}/${owner}/${repo}`;
  }

  fileUrl(target: Required<HubTarget>): URL {
    const path = target.file.split('/').map(encodeURIComponent).join('/');
    return new URL(`${this.#base}/${target.owner}/${target.repo}/resolve/${encodeURIComponent(target.revision)}/${path}`);
  }

  /** The repository's commit for `revision` and its file names; throws repo/revision not found. */
  async repoInfo(target: HubTarget, signal?: AbortSignal): Promise<{ sha: string | undefined; files: string[] }> {
    const suffix = target.revision === 'main' ? '' : `/revision/${encodeURIComponent(target.revision)}`;
    const url = new URL(`${this.#base}/api/models/${target.owner}/${target.repo}${suffix}`);
    const body = RepoInfoSchema.safeParse((await this.#getJson(url, target, signal)).body);
    if (!body.success) throw new PullError('http', `${this.endpoint.origin} sent repository info svc cannot read (${url.pathname})`);
    return { sha: body.data.sha, files: (body.data.siblings ?? []).map((s) => s.rfilename) };
  }

  /** Every file of the repository at `revision` (recursive, following the `Link: rel="next"` pages). */
  async listFiles(target: HubTarget, signal?: AbortSignal): Promise<HubFile[]> {
    let url: URL | undefined = new URL(`${this.#base}/api/models/${target.owner}/${target.repo}/tree/${encodeURIComponent(target.revision)}?recursive=true`);
    const files: HubFile[] = [];
    for (let page = 0; url !== undefined; page++) {
      if (page === MAX_TREE_PAGES) throw new PullError('http', `${this.endpoint.origin} lists more than ${MAX_TREE_PAGES} pages of files for ${target.owner}/${target.repo}`);
      const { body, headers }: { body: unknown; headers: Headers } = await this.#getJson(url, target, signal);
      const entries = z.array(TreeEntrySchema).safeParse(body);
      if (!entries.success) throw new PullError('http', `${this.endpoint.origin} sent a file listing svc cannot read (${url.pathname})`);
      for (const e of entries.data) {
        if (e.type !== 'file') continue;
        const sha = e.lfs?.oid.toLowerCase();
        files.push({ path: e.path, size: e.lfs?.size ?? e.size, sha256: sha !== undefined && SHA256.test(sha) ? sha : undefined });
      }
      url = nextPage(headers.get('link'), url);
    }
    return files;
  }

  async #getJson(url: URL, target: HubTarget, signal: AbortSignal | undefined): Promise<{ body: unknown; headers: Headers }> {
    const timeout = AbortSignal.timeout(API_TIMEOUT_MS);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    try {
      const { response } = await httpGet(url, { headers: { accept: 'application/json' }, headersFor: this.headersFor, signal: combined });
      if (!response.ok) {
        await response.body?.cancel();
        throw this.httpError(response, target);
      }
      try {
        return { body: await response.json(), headers: response.headers };
      } catch {
        throw new PullError('http', `${this.endpoint.origin} sent invalid JSON for ${url.pathname}`, { retryable: true });
      }
    } catch (error) {
      if (timeout.aborted && signal?.aborted !== true) throw new PullError('network', `${this.endpoint.origin} did not answer within ${API_TIMEOUT_MS / 1000} s`, { retryable: true });
      throw error;
    }
  }

  /**
   * One line for a hub refusal. The hub tells missing repositories, revisions and files apart by
   * `X-Error-Code`, and answers 401 for a repository that is missing or private when no token is sent.
   */
  httpError(response: Response, target: HubTarget): PullError {
    const code = response.headers.get('x-error-code');
    const name = `${target.owner}/${target.repo}`;
    const where = this.endpoint.origin;
    const status = response.status;
    if (code === 'GatedRepo' || (status === 403 && /gated/i.test(response.headers.get('x-error-message') ?? ''))) {
      return new PullError('gated', `${name} is gated: accept its terms at ${this.repoUrl(target.owner, target.repo)}${this.hasToken ? ' with the account HF_TOKEN belongs to' : ', then set HF_TOKEN'}`);
    }
    if (code === 'RevisionNotFound') return new PullError('revision_not_found', `revision '${target.revision}' not found in ${name} on ${where}`);
    if (code === 'EntryNotFound' || (status === 404 && target.file !== undefined && code !== 'RepoNotFound')) {
      return new PullError('file_not_found', `${target.file ?? 'file'} not found in ${name} (revision ${target.revision}) on ${where}`);
    }
    if (status === 401 && this.hasToken && code !== 'RepoNotFound') return new PullError('unauthorized', `${where} refused HF_TOKEN (401)`);
    if (code === 'RepoNotFound' || status === 404 || status === 401) {
      return new PullError('repo_not_found', `repository ${name} not found on ${where}${this.hasToken ? '' : ' (a private or gated repository needs HF_TOKEN)'}`);
    }
    if (status === 403) return new PullError('unauthorized', `${where} refused access to ${name} (403)`);
    if (status === 429) return new PullError('http', `${where} is rate-limiting requests (429); try again later`, { retryable: true });
    return new PullError('http', `${where} answered ${status} for ${name}`, { retryable: status >= 500 });
  }
}

/** The `rel="next"` target of a Link header, only on the same origin (the token is sent there). */
function nextPage(link: string | null, current: URL): URL | undefined {
  if (link === null) return undefined;
  for (const part of link.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m === null || !/\brel\s*=\s*"?next"?/i.test(m[2]!)) continue;
    try {
      const next = new URL(m[1]!, current);
      return next.origin === current.origin ? next : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
