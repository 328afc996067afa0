/**
 * A registry on loopback for installing svc's tarball with no network: it speaks the npm
 * registry's protocol (package documents at `/<name>`, tarballs under `/-/`) and answers from
 * what this machine already has. Package documents are made from the lock file (every version
 * it pins, with the fields npm resolves by) or, for a package the lock does not name (the Node
 * binary the `node` package's install script fetches), taken from npm's own cache where an
 * earlier install stored the registry's answer; tarballs are read from the npm cache by their
 * integrity. Anything else is a 404, so a missing package fails the install instead of reaching
 * for the internet. Why it is needed at all: `npm install -g <tarball>` resolves version ranges,
 * which takes the registry's package documents, and an install from a lock file (`npm install`,
 * `npm ci`) never stores those in the cache, so `--offline` alone fails with ENOTCACHED.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

interface LockEntry {
  version?: string;
  integrity?: string;
  inBundle?: boolean;
  link?: boolean;
  [field: string]: unknown;
}

/** The lock entry fields npm reads from a package document's version to resolve and place it. */
const RESOLUTION_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines', 'os', 'cpu', 'libc', 'hasInstallScript', 'license'];

export interface LocalNpmRegistry {
  url: string;
  /** Package documents and tarballs served, and what was asked for and not found. */
  served: { documents: number; tarballs: number; missing: string[] };
  close(): Promise<void>;
}

/** A cacache content path for an integrity string (`sha512-<base64>`). */
function contentPath(cache: string, integrity: string): string | undefined {
  const match = /^(sha\d+)-([A-Za-z0-9+/=]+)/.exec(integrity);
  if (match === null) return undefined;
  const hex = Buffer.from(match[2]!, 'base64').toString('hex');
  return join(cache, '_cacache', 'content-v2', match[1]!, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** The body npm's cache holds for `url`, found through cacache's index (the newest entry for the key). */
function cachedResponse(cache: string, url: string): Buffer | undefined {
  const key = `make-fetch-happen:request-cache:${url}`;
  const hash = createHash('sha256').update(key).digest('hex');
  let index: string;
  try {
    index = readFileSync(join(cache, '_cacache', 'index-v5', hash.slice(0, 2), hash.slice(2, 4), hash.slice(4)), 'utf8');
  } catch {
    return undefined;
  }
  for (const line of index.split('\n').reverse()) {
    const json = line.slice(line.indexOf('\t') + 1);
    try {
      const entry = JSON.parse(json) as { key?: string; integrity?: string | null };
      if (entry.key !== key || typeof entry.integrity !== 'string') continue;
      const path = contentPath(cache, entry.integrity);
      return path === undefined ? undefined : readFileSync(path);
    } catch {
      continue;
    }
  }
  return undefined;
}

export async function startLocalNpmRegistry(options: { lockFile: string; cache: string }): Promise<LocalNpmRegistry> {
  const lock = JSON.parse(readFileSync(options.lockFile, 'utf8')) as { packages: Record<string, LockEntry> };
  const versions = new Map<string, Map<string, LockEntry>>();
  const integrities = new Map<string, string>(); // tarball path → integrity
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.inBundle === true || entry.link === true || entry.version === undefined || entry.integrity === undefined) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    let byVersion = versions.get(name);
    if (byVersion === undefined) versions.set(name, (byVersion = new Map()));
    byVersion.set(entry.version, entry);
  }
  const served = { documents: 0, tarballs: 0, missing: [] as string[] };
  let base = '';

  const document = (name: string): Buffer | undefined => {
    const byVersion = versions.get(name);
    if (byVersion === undefined) return cachedResponse(options.cache, `https://registry.npmjs.org/${name.replace('/', '%2f')}`);
    const doc: { name: string; 'dist-tags': Record<string, string>; versions: Record<string, unknown> } = { name, 'dist-tags': {}, versions: {} };
    for (const [version, entry] of byVersion) {
      const file = `${name.split('/').pop()}-${version}.tgz`;
      const tarball = `${base}/-/${name}/${file}`;
      integrities.set(`/-/${name}/${file}`, entry.integrity!);
      const fields = Object.fromEntries(RESOLUTION_FIELDS.filter((f) => Object.hasOwn(entry, f)).map((f) => [f, entry[f]]));
      doc.versions[version] = { name, version, ...fields, dist: { tarball, integrity: entry.integrity } };
      doc['dist-tags'].latest = version;
    }
    return Buffer.from(JSON.stringify(doc));
  };

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let body: Buffer | undefined;
    if (path.startsWith('/-/')) {
      const integrity = integrities.get(path);
      const file = integrity === undefined ? undefined : contentPath(options.cache, integrity);
      try {
        body = file === undefined ? undefined : readFileSync(file);
        if (body !== undefined) served.tarballs++;
      } catch {
        body = undefined;
      }
      res.setHeader('content-type', 'application/octet-stream');
    } else {
      body = document(path.slice(1));
      if (body !== undefined) served.documents++;
      res.setHeader('content-type', 'application/json');
      // Answers made here must not land in the user's npm cache as if the registry had said them.
      res.setHeader('cache-control', 'no-store');
    }
    if (body === undefined) {
      served.missing.push(path);
      res.statusCode = 404;
      res.end('{"error":"not found"}');
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    served,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
