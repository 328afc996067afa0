/**
 * What each GGUF header said, keyed by the file's identity, so that listing models again reads
 * no GGUF at all: one JSON file at `<data-dir>/cache/gguf-index.json`. An entry holds while the
 * path still names the same file (device, inode), with the same size and modification time
 * (nanoseconds); anything else is a miss and the header is read again. Failures are kept too, so a
 * broken file is not re-read on every listing while it stays as it is.
 *
 * Across upgrades (docs/runtime.md): the file records its `format`. An older format (or none) is
 * dropped and rebuilt, since the entries are only what the GGUF files say and are read again. A
 * newer format is not refused as the stores are (a cache must not stop svc from starting): it is
 * ignored and left exactly as it is, for the newer svc that wrote it, and this svc keeps its
 * index in memory only, saying so in `notice`.
 */
import { lstat, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BigIntStats } from 'node:fs';
import { z } from 'zod';
import type { GgufSummary } from './gguf-header.ts';
import { makePrivateDir, writePrivateFile } from '../shared/private-files.ts';
import { checkStoreVersion, StoreVersionError } from '../shared/store-version.ts';

/** Bump when GgufSummary or the reader changes, so old entries are read again. */
const FORMAT = 1;

export type IndexedHeader = { ok: true; summary: GgufSummary } | { ok: false; error: string };

interface Entry {
  /** `dev:ino:size:mtimeNs`. */
  identity: string;
  header: IndexedHeader;
}

// The cache is our own file, but it lives on disk: anything unexpected is treated as a miss.
const entrySchema = z.object({ identity: z.string(), header: z.unknown() });

const summarySchema = z.object({
  version: z.number(),
  architecture: z.string().nullable(),
  name: z.string().nullable(),
  type: z.string().nullable(),
  fileType: z.number().nullable(),
  quantization: z.string().nullable(),
  sizeLabel: z.string().nullable(),
  parameterCount: z.number(),
  tensorCount: z.number(),
  contextLength: z.number().nullable(),
  embeddingLength: z.number().nullable(),
  poolingType: z.number().nullable(),
  causalAttention: z.boolean().nullable(),
  hasChatTemplate: z.boolean(),
  split: z.object({ no: z.number(), count: z.number() }).nullable(),
});
const headerSchema = z.union([
  z.object({ ok: z.literal(true), summary: summarySchema }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

export function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
}

export class GgufIndexCache {
  #path: string | undefined;
  #notice: string | undefined;
  readonly #old = new Map<string, Entry>();
  readonly #now = new Map<string, Entry>();
  #changed = false;

  private constructor(path: string | undefined) {
    this.#path = path;
  }

  /** Loads the cache of a data directory (an empty one if there is none or it is unreadable); no path: in memory only. */
  static async load(path: string | undefined): Promise<GgufIndexCache> {
    const cache = new GgufIndexCache(path);
    if (path === undefined) return cache;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return cache;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const format = typeof json === 'object' && json !== null ? (json as { format?: unknown }).format : undefined;
    try {
      checkStoreVersion({ store: 'model index cache', file: path }, format ?? 0, FORMAT);
    } catch (error) {
      if (!(error instanceof StoreVersionError)) throw error;
      // Only a newer format is kept as it is; an unreadable one is our own broken cache: rebuilt below.
      if (typeof error.found === 'number') {
        cache.#path = undefined;
        cache.#notice = `the model index cache ${path} has format ${error.found}, newer than this svc knows (${FORMAT}): a newer svc wrote it; it is left as it is and model headers are read on each listing (upgrade svc to use it)`;
        return cache;
      }
    }
    const entries = format === FORMAT ? (json as { entries?: unknown }).entries : undefined;
    if (typeof entries !== 'object' || entries === null) {
      cache.#changed = true;
      return cache;
    }
    // JSON.parse makes every key an own property (even `__proto__`); they go into a Map.
    for (const [file, value] of Object.entries(entries)) {
      const entry = entrySchema.safeParse(value);
      if (entry.success) cache.#old.set(file, entry.data as Entry);
    }
    return cache;
  }

  /** Why the cache on disk is not used (a newer svc's format), for the listing's warnings. */
  get notice(): string | undefined {
    return this.#notice;
  }

  static pathIn(dataDir: string): string {
    return join(dataDir, 'cache', 'gguf-index.json');
  }

  /** The header recorded for this path and identity, if the file has not changed since. */
  get(path: string, identity: string): IndexedHeader | undefined {
    const entry = this.#now.get(path) ?? this.#old.get(path);
    if (entry === undefined || entry.identity !== identity) return undefined;
    const header = headerSchema.safeParse(entry.header);
    if (!header.success) return undefined;
    this.#now.set(path, entry);
    return header.data as IndexedHeader;
  }

  set(path: string, identity: string, header: IndexedHeader): void {
    this.#now.set(path, { identity, header });
    this.#changed = true;
  }

  /**
   * Writes the cache when anything changed: the entries used in this listing, and earlier ones
   * whose file still exists (a listing with a store switched off keeps that store's entries);
   * entries of deleted files drop out. Write-then-rename, so a reader never sees half a file.
   * Returns the error, if any.
   */
  async save(): Promise<Error | undefined> {
    if (this.#path === undefined) return undefined;
    const unused = [...this.#old.keys()].filter((file) => !this.#now.has(file));
    const gone = new Set((await Promise.all(unused.map(async (file) => ((await lstat(file).catch(() => undefined)) === undefined ? file : undefined))))
      .filter((file) => file !== undefined));
    if (!this.#changed && gone.size === 0) return undefined;
    const entries: Record<string, Entry> = Object.create(null) as Record<string, Entry>;
    for (const file of unused) if (!gone.has(file)) entries[file] = this.#old.get(file)!;
    for (const [file, entry] of this.#now) entries[file] = entry;
    const temp = `${this.#path}.${process.pid}.tmp`;
    try {
      // It names the model files on this machine: the user's alone, like the rest of the data dir.
      await makePrivateDir(dirname(this.#path));
      await writePrivateFile(temp, JSON.stringify({ format: FORMAT, entries }));
      await rename(temp, this.#path);
      return undefined;
    } catch (error) {
      return error as Error;
    }
  }
}
