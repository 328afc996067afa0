/**
 * A local stand-in for the Hugging Face hub and its CDN: two real HTTP servers on loopback.
 *
 * The hub speaks the routes a pull uses, in the hub's shapes (huggingface.js api-model /
 * api-index-tree types, huggingface_hub's error handling):
 * - `GET /api/models/{owner}/{repo}` and `…/revision/{rev}`: `{ id, sha, siblings: [{ rfilename }] }`;
 * - `GET /api/models/{owner}/{repo}/tree/{rev}?recursive=true`: `[{ type, oid, size, path, lfs? }]`,
 *   paginated with `Link: <…>; rel="next"`;
 * - `GET|HEAD /{owner}/{repo}/resolve/{rev}/{path}`: a 302 to the CDN for LFS files, carrying
 *   `x-linked-etag` (the sha256), `x-linked-size` and `x-repo-commit`;
 * - refusals with `X-Error-Code` (RepoNotFound: 401 without a token, 404 with one; RevisionNotFound,
 *   EntryNotFound; GatedRepo 403 on a gated repository's files, whose metadata stays public).
 * The CDN serves `/blob/{sha256}` and plain `/files/{name}` with Range (206, 416) and If-Range.
 * Faults are switched on `hub.faults` at any time: throttle, drop the connection after N bytes,
 * ignore Range, serve wrong bytes, or answer a status.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockRepoSpec {
  owner: string;
  repo: string;
  /** Path in the repository → bytes. Files ending in .gguf are stored as LFS (sha256 published). */
  files: Record<string, Buffer>;
  gated?: boolean;
  private?: boolean;
}

export interface MockFaults {
  /** Bytes per second for file bodies (0 = unthrottled). */
  throttleBytesPerSecond: number;
  /** Destroy the connection after this many body bytes, for the next `dropTimes` responses. */
  dropAfterBytes: number;
  dropTimes: number;
  /** Answer every file request 200 with the whole file, whatever its Range says. */
  ignoreRange: boolean;
  /** Serve other bytes of the same length (the published sha256 no longer matches). */
  corrupt: boolean;
  /** Leave `lfs` out of tree entries and `x-linked-etag` off responses (a mirror without checksums). */
  hideChecksums: boolean;
  /** Answer file requests with this status instead (e.g. 500). */
  fileStatus: number;
}

export interface RecordedRequest {
  server: 'hub' | 'cdn';
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface MockHub {
  /** HF_ENDPOINT for the hub. */
  url: string;
  /** The CDN's origin (plain file URLs: `${cdnUrl}/files/<name>`). */
  cdnUrl: string;
  requests: RecordedRequest[];
  faults: MockFaults;
  /** Publishes a plain file at `${cdnUrl}/files/<name>`. */
  addFile(name: string, bytes: Buffer): void;
  sha256(bytes: Buffer): string;
  commit: string;
  close(): Promise<void>;
}

const COMMIT = 'c0ffee0000000000000000000000000000000001';
const TREE_PAGE = 2;

const digests = new WeakMap<Buffer, string>();
/** Cached per buffer: the CDN names every response by it, and a bench serves hundreds of MB. */
function sha256(bytes: Buffer): string {
  let digest = digests.get(bytes);
  if (digest === undefined) {
    digest = createHash('sha256').update(bytes).digest('hex');
    digests.set(bytes, digest);
  }
  return digest;
}

function gitBlobSha1(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startMockHub(options: { repos: MockRepoSpec[]; token?: string }): Promise<MockHub> {
  const requests: RecordedRequest[] = [];
  const faults: MockFaults = { throttleBytesPerSecond: 0, dropAfterBytes: 0, dropTimes: 0, ignoreRange: false, corrupt: false, hideChecksums: false, fileStatus: 0 };
  const blobs = new Map<string, Buffer>();
  const plainFiles = new Map<string, Buffer>();
  const repos = new Map(options.repos.map((r) => [`${r.owner}/${r.repo}`, r]));
  for (const r of options.repos) for (const bytes of Object.values(r.files)) blobs.set(sha256(bytes), bytes);

  const authorized = (req: IncomingMessage) => options.token !== undefined && req.headers.authorization === `Bearer ${options.token}`;

  function refuse(res: ServerResponse, status: number, code: string | undefined, message: string): void {
    if (code !== undefined) res.setHeader('x-error-code', code);
    res.setHeader('x-error-message', message);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message }));
  }

  /** The repository a request may see, or a refusal already sent. */
  function repoFor(req: IncomingMessage, res: ServerResponse, owner: string, repo: string, revision: string | undefined, file = false): MockRepoSpec | undefined {
    const spec = repos.get(`${owner}/${repo}`);
    if (spec === undefined || (spec.private === true && !authorized(req))) {
      // The hub answers 401 to an anonymous caller for a repository it will not confirm exists.
      refuse(res, authorized(req) ? 404 : 401, 'RepoNotFound', 'Repository not found');
      return undefined;
    }
    // A gated repository's metadata and tree are public; its files are not.
    if (file && spec.gated === true && !authorized(req)) {
      refuse(res, 403, 'GatedRepo', 'Access to model is restricted and you are not in the authorized list.');
      return undefined;
    }
    if (revision !== undefined && revision !== 'main' && revision !== COMMIT) {
      refuse(res, 404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
      return undefined;
    }
    return spec;
  }

  function hub(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://hub');
    const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    if (parts[0] === 'api' && parts[1] === 'models') {
      const [, , owner = '', repo = '', route, revision, ...rest] = parts;
      if (route === undefined || route === 'revision') {
        const spec = repoFor(req, res, owner, repo, route === 'revision' ? revision : undefined);
        if (spec === undefined) return;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          _id: 'x', id: `${owner}/${repo}`, sha: COMMIT, private: spec.private === true, gated: spec.gated === true ? 'manual' : false,
          siblings: Object.keys(spec.files).map((rfilename) => ({ rfilename })), tags: ['gguf'],
        }));
        return;
      }
      if (route === 'tree') {
        const spec = repoFor(req, res, owner, repo, revision);
        if (spec === undefined) return;
        if (rest.length > 0) {
          refuse(res, 404, 'EntryNotFound', 'path not found');
          return;
        }
        const entries: unknown[] = [];
        const dirs = new Set<string>();
        for (const [path, bytes] of Object.entries(spec.files)) {
          const segments = path.split('/');
          for (let i = 1; i < segments.length; i++) dirs.add(segments.slice(0, i).join('/'));
          const lfs = path.endsWith('.gguf') && !faults.hideChecksums;
          entries.push({
            type: 'file', oid: gitBlobSha1(bytes), size: bytes.length, path,
            ...(lfs ? { lfs: { oid: sha256(bytes), size: bytes.length, pointerSize: 134 } } : {}),
          });
        }
        for (const dir of dirs) entries.push({ type: 'directory', oid: 'd'.repeat(40), size: 0, path: dir });
        const cursor = Number(url.searchParams.get('cursor') ?? '0');
        const page = entries.slice(cursor, cursor + TREE_PAGE);
        if (cursor + TREE_PAGE < entries.length) {
          const next = new URL(req.url ?? '/', `http://${req.headers.host}`);
          next.searchParams.set('cursor', String(cursor + TREE_PAGE));
          res.setHeader('link', `<${next.href}>; rel="next"`);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
        return;
      }
      refuse(res, 404, undefined, 'not found');
      return;
    }
    // /{owner}/{repo}/resolve/{rev}/{path…}
    const [owner = '', repo = '', route, revision, ...path] = parts;
    if (route !== 'resolve' || revision === undefined || path.length === 0) {
      refuse(res, 404, undefined, 'not found');
      return;
    }
    const spec = repoFor(req, res, owner, repo, revision, true);
    if (spec === undefined) return;
    const file = path.join('/');
    const bytes = Object.hasOwn(spec.files, file) ? spec.files[file] : undefined;
    if (bytes === undefined) {
      refuse(res, 404, 'EntryNotFound', `${file} does not exist on "${revision}"`);
      return;
    }
    const sha = sha256(bytes);
    res.setHeader('x-repo-commit', COMMIT);
    if (!faults.hideChecksums) {
      res.setHeader('x-linked-etag', `"${sha}"`);
      res.setHeader('x-linked-size', String(bytes.length));
    }
    res.setHeader('etag', `"${sha}"`);
    res.writeHead(302, { location: `${cdnUrl}/blob/${sha}?X-Amz-Signature=mock` }).end();
  }

  function cdn(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://cdn');
    const [kind, name = ''] = url.pathname.split('/').slice(1).map(decodeURIComponent);
    const bytes = kind === 'blob' ? blobs.get(name) : kind === 'files' ? plainFiles.get(name) : undefined;
    if (bytes === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('NoSuchKey');
      return;
    }
    if (faults.fileStatus !== 0) {
      res.writeHead(faults.fileStatus, { 'content-type': 'text/plain' }).end('fault');
      return;
    }
    const etag = `"${sha256(bytes)}"`;
    const body = faults.corrupt ? Buffer.from(bytes.map((b, i) => (i === bytes.length - 1 ? b ^ 0xff : b))) : bytes;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    const honour = range !== null && !faults.ignoreRange && (ifRange === undefined || ifRange === etag);
    res.setHeader('accept-ranges', 'bytes');
    res.setHeader('etag', etag);
    if (honour) {
      const start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}`, 'content-length': String(body.length - start), 'content-type': 'application/octet-stream' });
      void send(req, res, body.subarray(start));
      return;
    }
    res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' });
    void send(req, res, body);
  }

  async function send(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const drop = faults.dropTimes > 0 && faults.dropAfterBytes > 0 ? faults.dropAfterBytes : Infinity;
    if (drop !== Infinity) faults.dropTimes--;
    const chunk = faults.throttleBytesPerSecond > 0 ? Math.max(1024, Math.floor(faults.throttleBytesPerSecond / 20)) : 64 * 1024;
    let sent = 0;
    while (sent < body.length && !res.destroyed) {
      const end = Math.min(body.length, sent + chunk, drop);
      if (end > sent) {
        const ok = res.write(body.subarray(sent, end));
        sent = end;
        if (!ok) await new Promise((r) => res.once('drain', r));
      }
      if (sent >= drop) {
        // Let the bytes leave, then cut the connection mid-body.
        await new Promise((r) => setTimeout(r, 20));
        res.socket?.destroy();
        return;
      }
      if (faults.throttleBytesPerSecond > 0) await new Promise((r) => setTimeout(r, 50));
    }
    res.end();
  }

  const record = (server: 'hub' | 'cdn', handler: (req: IncomingMessage, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ server, method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  };
  const hubServer = createServer(record('hub', hub));
  const cdnServer = createServer(record('cdn', cdn));
  const [hubUrl, cdnUrl] = await Promise.all([listen(hubServer), listen(cdnServer)]);
  return {
    url: hubUrl,
    cdnUrl,
    requests,
    faults,
    commit: COMMIT,
    sha256,
    addFile(name, bytes) {
      plainFiles.set(name, bytes);
    },
    async close() {
      for (const s of [hubServer, cdnServer]) s.closeAllConnections();
      await Promise.all([hubServer, cdnServer].map((s) => new Promise((r) => s.close(r))));
    },
  };
}
