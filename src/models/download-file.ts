import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, statfs, truncate, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireDownloadLock } from './download-lock.ts';
import { defaultHttpError, headerNumber, parseContentRange } from './download-response.ts';
import { httpGet, type HttpGetResult } from './http-get.ts';
import { sha256FromEtag } from './hugging-face-hub.ts';
import { fsError, partialPaths, readPartialMeta, removeQuietly, sizeOf, type PartialMeta } from './partial-download.ts';
import { PullError } from './pull-error.ts';
import { verifyAndPlace } from './verify-download.ts';
import { makeHandlePrivate, makePrivateDir, PRIVATE_FILE_MODE, writePrivateFile } from '../shared/private-files.ts';

/**
 * Resumable, verified download of one file.
 *
 * Bytes go to `<dest>.partial` (never a name a model scan would pick up); `<dest>.partial.json`
 * remembers what the partial is a prefix of (URL, publisher's sha256 and size, the server's
 * validator for `If-Range`). A later run asks for the rest with `Range`, re-hashing the prefix
 * first so the final sha256 covers every byte. Only after the size, the sha256 (where the source
 * publishes one) and the GGUF magic are checked is the file fsynced and renamed into place, so
 * a killed pull never leaves a file that looks like a model.
 *
 * The files beside the download are in partial-download.ts, its lock in download-lock.ts, the
 * reading of the server's answer in download-response.ts, the final checks in verify-download.ts.
 */
export interface DownloadRequest {
  url: URL;
  dest: string;
  expectedSize?: number | undefined;
  /** Lowercase hex; the publisher's checksum (the hub's LFS oid, or `--sha256`). */
  expectedSha256?: string | undefined;
  /** Take a sha256 from the first hop's `x-linked-etag` when none is expected (the hub sends it on `resolve`). */
  trustLinkedEtag?: boolean;
  headersFor?: ((url: URL) => Record<string, string>) | undefined;
  /** Turns a refusal (4xx/5xx) into a PullError; the default names the status. */
  describeHttpError?: ((response: Response, url: URL) => PullError) | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: DownloadProgress) => void) | undefined;
  /** Reconnections after a dropped or stalled transfer within this call (default 3). */
  retries?: number | undefined;
  /** First wait before reconnecting; doubled each time (default 1000 ms). */
  retryDelayMs?: number | undefined;
  /** A transfer that receives nothing this long is dropped and retried (default 30 s). */
  stallTimeoutMs?: number | undefined;
  /** Refuse a file that does not start with `GGUF` (default true). */
  requireGgufMagic?: boolean | undefined;
}

export type DownloadProgress =
  | { phase: 'checking'; bytes: number; total: number }
  | { phase: 'downloading'; bytes: number; total: number | undefined; resumedFrom: number }
  | { phase: 'retrying'; attempt: number; delayMs: number; reason: string; bytes: number }
  | { phase: 'restarting'; reason: string }
  | { phase: 'verifying'; bytes: number };

export interface DownloadResult {
  path: string;
  bytes: number;
  sha256: string;
  /** The sha256 was compared with one the source published. */
  verified: boolean;
  /** Bytes reused from an earlier, interrupted run. */
  resumedFrom: number;
}

const DEFAULTS = { retries: 3, retryDelayMs: 1000, stallTimeoutMs: 30_000 };

const MB = 1024 * 1024;
function formatBytes(n: number): string {
  return n >= 1024 * MB ? `${(n / 1024 / MB).toFixed(1)} GiB` : `${(n / MB).toFixed(1)} MiB`;
}

export async function downloadFile(request: DownloadRequest): Promise<DownloadResult> {
  const { dest } = request;
  const [partial, metaPath, lockPath] = partialPaths(dest) as [string, string, string];
  try {
    // The models folder is the user's alone (src/shared/private-files.ts), as is each file in it.
    await makePrivateDir(dirname(dest));
  } catch (error) {
    throw fsError(error, dirname(dest), 'creating');
  }
  const release = await acquireDownloadLock(lockPath, basename(dest));
  try {
    return await new Download(request, partial, metaPath).run();
  } finally {
    await release();
  }
}

type Transfer = 'complete' | 'again';

class Download {
  readonly #r: DownloadRequest;
  readonly #partial: string;
  readonly #metaPath: string;
  #hash: Hash = createHash('sha256');
  /** Bytes in the partial, all of them fed to #hash. */
  #offset = 0;
  #resumedFrom = 0;
  #expectedSha: string | undefined;
  #expectedSize: number | undefined;
  #meta: PartialMeta | undefined;
  #restarts = 0;

  constructor(request: DownloadRequest, partial: string, metaPath: string) {
    this.#r = request;
    this.#partial = partial;
    this.#metaPath = metaPath;
    this.#expectedSha = request.expectedSha256?.toLowerCase();
    this.#expectedSize = request.expectedSize;
  }

  #progress(p: DownloadProgress): void {
    this.#r.onProgress?.(p);
  }

  async run(): Promise<DownloadResult> {
    await this.#adoptPartial();
    const retries = this.#r.retries ?? DEFAULTS.retries;
    const baseDelay = this.#r.retryDelayMs ?? DEFAULTS.retryDelayMs;
    let attempt = 0;
    let state: Transfer = this.#expectedSize !== undefined && this.#offset === this.#expectedSize ? 'complete' : 'again';
    while (state === 'again') {
      try {
        state = await this.#transfer();
      } catch (error) {
        this.#throwIfAborted(error);
        if (!(error instanceof PullError) || !error.isRetryable || attempt >= retries) throw error;
        attempt++;
        const delayMs = baseDelay * 2 ** (attempt - 1);
        this.#progress({ phase: 'retrying', attempt, delayMs, reason: error.message, bytes: this.#offset });
        try {
          await sleep(delayMs, undefined, { signal: this.#r.signal });
        } catch (sleepError) {
          this.#throwIfAborted(sleepError);
          throw sleepError;
        }
      }
    }
    return this.#finish();
  }

  #throwIfAborted(cause: unknown): void {
    if (this.#r.signal?.aborted === true) {
      throw new PullError('aborted', `interrupted; ${this.#offset > 0 ? `${formatBytes(this.#offset)} kept in ${basename(this.#partial)}, ` : ''}run the same command to resume`, { cause });
    }
  }

  /** Decides whether the partial on disk is a prefix of this file, and hashes it if so. */
  async #adoptPartial(): Promise<void> {
    this.#meta = await readPartialMeta(this.#metaPath);
    this.#offset = await sizeOf(this.#partial);
    if (this.#offset === 0) return;
    const meta = this.#meta;
    let stale: string | undefined;
    if (this.#expectedSize !== undefined && this.#offset > this.#expectedSize) stale = 'the partial download is larger than the file';
    else if (meta !== undefined && this.#expectedSha !== undefined && meta.sha256 !== undefined && meta.sha256 !== this.#expectedSha) stale = 'the file changed since the partial download';
    else if (meta !== undefined && this.#expectedSha === undefined && meta.url !== this.#r.url.href) stale = 'the partial download came from another URL';
    if (stale !== undefined) {
      await this.#restart(stale);
      return;
    }
    const total = this.#offset;
    let hashed = 0;
    const stream = createReadStream(this.#partial, { start: 0, end: total - 1, signal: this.#r.signal });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        this.#hash.update(chunk);
        hashed += chunk.length;
        this.#progress({ phase: 'checking', bytes: hashed, total });
      }
    } catch (error) {
      this.#throwIfAborted(error);
      throw error;
    }
    this.#resumedFrom = total;
  }

  async #restart(reason: string): Promise<void> {
    if (++this.#restarts > 3) throw new PullError('http', `the download of ${basename(this.#r.dest)} restarted ${this.#restarts - 1} times (${reason}); giving up`);
    this.#progress({ phase: 'restarting', reason });
    // truncate, not unlink: the partial may be a link the user set up (another disk).
    try {
      await truncate(this.#partial, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(error, this.#partial, 'truncating');
    }
    await removeQuietly(this.#metaPath);
    this.#meta = undefined;
    this.#offset = 0;
    this.#resumedFrom = 0;
    this.#hash = createHash('sha256');
  }

  async #transfer(): Promise<Transfer> {
    const stallMs = this.#r.stallTimeoutMs ?? DEFAULTS.stallTimeoutMs;
    const stall = new AbortController();
    const signal = this.#r.signal === undefined ? stall.signal : AbortSignal.any([this.#r.signal, stall.signal]);
    let timer = setTimeout(() => stall.abort(), stallMs);
    const stalled = () => new PullError('network', `no data from ${this.#r.url.origin} for ${stallMs / 1000} s`, { retryable: true });
    try {
      const headers: Record<string, string> = {};
      if (this.#offset > 0) {
        headers.range = `bytes=${this.#offset}-`;
        // If-Range: a server whose file changed since the partial answers 200 with all of it.
        const validator = this.#meta?.etag ?? this.#meta?.lastModified;
        if (validator !== undefined) headers['if-range'] = validator;
      }
      let got: HttpGetResult;
      try {
        got = await httpGet(this.#r.url, { headers, headersFor: this.#r.headersFor, signal });
      } catch (error) {
        if (stall.signal.aborted && this.#r.signal?.aborted !== true) throw stalled();
        throw error;
      }
      const { response, firstHeaders } = got;
      const range = parseContentRange(response.headers.get('content-range'));
      if (response.status === 416) {
        await response.body?.cancel();
        if (range.total !== undefined && range.total === this.#offset) return 'complete';
        await this.#restart(`the server cannot resume at byte ${this.#offset} (416)`);
        return 'again';
      }
      if (response.status === 206) {
        if (range.start !== this.#offset) {
          await response.body?.cancel();
          await this.#restart(`the server resumed at byte ${range.start ?? '?'} instead of ${this.#offset}`);
          return 'again';
        }
      } else if (response.status === 200) {
        // Asked for a range and got the whole file (the server ignores Range, or If-Range saw a
        // change): start over from this very response, which carries every byte.
        if (this.#offset > 0) await this.#restart('the server sent the whole file instead of the rest (no Range support, or the file changed)');
      } else {
        await response.body?.cancel();
        throw (this.#r.describeHttpError ?? defaultHttpError)(response, got.url);
      }

      const total = response.status === 206 ? range.total : headerNumber(response.headers.get('content-length'));
      if (this.#r.trustLinkedEtag === true && this.#expectedSha === undefined) this.#expectedSha = sha256FromEtag(firstHeaders.get('x-linked-etag'));
      this.#expectedSize ??= headerNumber(firstHeaders.get('x-linked-size')) ?? total;
      if (total !== undefined && this.#expectedSize !== total) {
        await response.body?.cancel();
        throw new PullError('size_mismatch', `${this.#r.url.origin} sends ${total} bytes for ${basename(this.#r.dest)} but ${this.#expectedSize} were expected`);
      }
      if (response.body === null) throw new PullError('network', `${this.#r.url.origin} sent no body`, { retryable: true });
      await this.#checkSpace(response);
      await this.#saveMeta(response);

      const resumedFrom = this.#offset;
      let file: FileHandle | undefined;
      try {
        file = await open(this.#partial, this.#offset === 0 ? 'w' : 'a', PRIVATE_FILE_MODE);
        // A partial an older svc began may be 0644; the model renamed from it keeps this mode.
        await makeHandlePrivate(file);
      } catch (error) {
        await file?.close();
        await response.body.cancel();
        throw fsError(error, this.#partial, 'opening');
      }
      try {
        try {
          for await (const chunk of response.body) {
            clearTimeout(timer);
            timer = setTimeout(() => stall.abort(), stallMs);
            try {
              await file.write(chunk);
            } catch (error) {
              throw fsError(error, this.#partial, 'writing');
            }
            this.#hash.update(chunk);
            this.#offset += chunk.length;
            this.#progress({ phase: 'downloading', bytes: this.#offset, total: this.#expectedSize, resumedFrom });
          }
        } catch (error) {
          if (error instanceof PullError) throw error;
          if (this.#r.signal?.aborted === true) throw error;
          if (stall.signal.aborted) throw stalled();
          throw new PullError('network', `connection to ${got.url.origin} dropped after ${formatBytes(this.#offset)}`, { cause: error, retryable: true });
        }
        if (this.#expectedSize !== undefined && this.#offset < this.#expectedSize) {
          throw new PullError('network', `connection to ${got.url.origin} closed early at ${formatBytes(this.#offset)} of ${formatBytes(this.#expectedSize)}`, { retryable: true });
        }
        try {
          await file.sync();
        } catch (error) {
          throw fsError(error, this.#partial, 'writing');
        }
      } finally {
        await file.close();
      }
      return 'complete';
    } finally {
      clearTimeout(timer);
    }
  }

  async #checkSpace(response: Response): Promise<void> {
    const remaining = (this.#expectedSize ?? 0) - this.#offset;
    if (remaining <= 0) return;
    let free: number;
    try {
      const fs = await statfs(dirname(this.#partial));
      free = fs.bavail * fs.bsize;
    } catch {
      return; // no statfs here: the writes will say ENOSPC if it comes to that
    }
    if (remaining > free) {
      await response.body?.cancel();
      throw new PullError('disk_full', `not enough disk space for ${basename(this.#r.dest)}: ${formatBytes(remaining)} needed, ${formatBytes(free)} free in ${dirname(this.#partial)}`);
    }
  }

  async #saveMeta(response: Response): Promise<void> {
    const etag = response.headers.get('etag') ?? undefined;
    this.#meta = {
      url: this.#r.url.href,
      sha256: this.#expectedSha,
      size: this.#expectedSize,
      // If-Range takes a strong ETag or a date; a weak one would make every resume restart.
      etag: etag !== undefined && !etag.startsWith('W/') ? etag : undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
    };
    try {
      await writePrivateFile(this.#metaPath, JSON.stringify(this.#meta));
    } catch (error) {
      throw fsError(error, this.#metaPath, 'writing');
    }
  }

  async #finish(): Promise<DownloadResult> {
    this.#progress({ phase: 'verifying', bytes: this.#offset });
    const { bytes, sha256 } = await verifyAndPlace({
      dest: this.#r.dest,
      partial: this.#partial,
      metaPath: this.#metaPath,
      hash: this.#hash,
      expectedSize: this.#expectedSize,
      expectedSha: this.#expectedSha,
      requireGgufMagic: this.#r.requireGgufMagic,
    });
    return { path: this.#r.dest, bytes, sha256, verified: this.#expectedSha !== undefined, resumedFrom: this.#resumedFrom };
  }
}
