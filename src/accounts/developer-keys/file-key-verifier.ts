import { readFileSync, statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { hashSecret, looksLikeKeySecret, sameHash } from '../store/store-secrets.ts';
import { parseDeveloperKeyFile, type ExportedKey } from './developer-key-file.ts';
import type { DeveloperKeyVerification, DeveloperKeyVerifier } from './developer-key-verifier.ts';

export interface FileKeyVerifierOptions {
  /** How often, at most, a verification looks at the file's modification time (ms). */
  checkIntervalMs?: number | undefined;
  /** Told once when a reload fails (and again only after a good load in between). */
  onWarning?: ((message: string) => void) | undefined;
  /** The clock for the check interval (ms); monotonic by default. */
  clock?: (() => number) | undefined;
}

export const DEFAULT_CHECK_INTERVAL_MS = 1000;

/** A file that cannot be used at start-up: the daemon refuses to start with this message. */
export class DeveloperKeyFileError extends Error {
  override name = 'DeveloperKeyFileError';
}

interface Loaded {
  /** secret_sha256 → key. */
  byHash: Map<string, ExportedKey>;
  active: number;
  /** What identifies this version of the file: changes when it is rewritten or replaced. */
  signature: string;
}

function signatureOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function index(text: string, signature: string): Loaded {
  const file = parseDeveloperKeyFile(text);
  const byHash = new Map<string, ExportedKey>();
  for (const key of file.keys) byHash.set(key.secret_sha256, key);
  return { byHash, active: file.keys.filter((k) => k.revoked_at === null).length, signature };
}

/**
 * Verifies keys against an exported file (svc-developer-keys v1). The file is read whole at
 * start; afterwards, at most once per check interval and only when a request comes, its
 * stat signature is compared and a changed file is read again. A reload that fails (half
 * written, broken JSON, deleted) keeps the last good set, so a bad export never locks every
 * developer out, and warns once.
 */
export class FileKeyVerifier implements DeveloperKeyVerifier {
  readonly source = 'file' as const;
  readonly #path: string;
  readonly #checkIntervalMs: number;
  readonly #onWarning: (message: string) => void;
  readonly #clock: () => number;
  #loaded: Loaded;
  #lastCheck: number;
  #checking: Promise<void> | undefined;
  #warnedFor: string | undefined;

  constructor(path: string, options: FileKeyVerifierOptions = {}) {
    this.#path = path;
    this.#checkIntervalMs = options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
    this.#onWarning = options.onWarning ?? (() => {});
    this.#clock = options.clock ?? (() => performance.now());
    try {
      const signature = signatureOf(statSync(path));
      this.#loaded = index(readFileSync(path, 'utf8'), signature);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
      throw new DeveloperKeyFileError(`developer keys file ${path}: ${reason}`);
    }
    this.#lastCheck = this.#clock();
  }

  keyCount(): number {
    return this.#loaded.active;
  }

  async verify(secret: string): Promise<DeveloperKeyVerification> {
    await this.#maybeReload();
    if (typeof secret !== 'string' || !looksLikeKeySecret(secret)) return { status: 'unknown' };
    const hash = hashSecret(secret);
    const key = this.#loaded.byHash.get(hash);
    // The Map finds the candidate by its hash (which reveals nothing about other secrets, as the
    // store's indexed lookup does); the final equality is constant-time all the same.
    if (key === undefined || !sameHash(key.secret_sha256, hash)) return { status: 'unknown' };
    if (key.revoked_at !== null) return { status: 'revoked' };
    return { status: 'valid', keyId: key.id, accountId: key.account_id, project: key.project, scope: key.scope };
  }

  /** Concurrent requests share one check; none waits longer than one stat (and a read if it changed). */
  #maybeReload(): Promise<void> {
    const now = this.#clock();
    if (this.#checking !== undefined) return this.#checking;
    if (now - this.#lastCheck < this.#checkIntervalMs) return Promise.resolve();
    this.#lastCheck = now;
    this.#checking = this.#reload().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #reload(): Promise<void> {
    try {
      const signature = signatureOf(await stat(this.#path));
      if (signature === this.#loaded.signature) return;
      const text = await readFile(this.#path, 'utf8');
      this.#loaded = index(text, signature);
      this.#warnedFor = undefined;
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file is gone' : (error as Error).message;
      // Once per broken spell: a request a second must not log a warning a second.
      if (this.#warnedFor === undefined) {
        this.#warnedFor = reason;
        this.#onWarning(`developer keys file ${this.#path}: reload failed (${reason}); keeping the ${this.#loaded.byHash.size} keys loaded before`);
      }
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
