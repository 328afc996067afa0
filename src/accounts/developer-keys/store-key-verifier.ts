import type { KeyStore } from '../key-store.ts';
import type { StoreConnection } from '../store-connection.ts';
import type { DeveloperKeyVerification, DeveloperKeyVerifier } from './developer-key-verifier.ts';

/** How stale the key count in `/health` may get before it is counted again (in the background). */
const COUNT_TTL_MS = 10_000;

/** What the verifier uses of the store: the key check, the key list it counts, and closing it. */
export type KeyVerifierStore = Pick<KeyStore, 'checkKey' | 'listKeyHashes'> & Pick<StoreConnection, 'close'>;

/**
 * Verifies keys against the hosted store (its SQLite data dir or PostgreSQL): revocations
 * take effect on the next request. Owns the store it is given and closes it.
 */
export class StoreKeyVerifier implements DeveloperKeyVerifier {
  readonly source = 'store' as const;
  readonly #store: KeyVerifierStore;
  readonly #onWarning: (message: string) => void;
  #count = 0;
  #countedAt = Number.NEGATIVE_INFINITY;
  #counting = false;
  #closed = false;

  constructor(store: KeyVerifierStore, options: { onWarning?: ((message: string) => void) | undefined } = {}) {
    this.#store = store;
    this.#onWarning = options.onWarning ?? (() => {});
  }

  /** Counts the keys once before the daemon starts serving, so `/health` is right from the start. */
  async refreshCount(): Promise<number> {
    const keys = await this.#store.listKeyHashes();
    this.#count = keys.filter((k) => k.key.revokedAt === null).length;
    this.#countedAt = performance.now();
    return this.#count;
  }

  keyCount(): number {
    if (!this.#closed && !this.#counting && performance.now() - this.#countedAt > COUNT_TTL_MS) {
      this.#counting = true;
      this.refreshCount()
        .catch((error: unknown) => this.#onWarning(`developer keys: counting keys in the hosted store failed (${(error as Error).message})`))
        .finally(() => {
          this.#counting = false;
        });
    }
    return this.#count;
  }

  async verify(secret: string): Promise<DeveloperKeyVerification> {
    const check = await this.#store.checkKey(secret);
    if (check.status === 'unknown') return { status: 'unknown' };
    if (check.status === 'revoked') return { status: 'revoked' };
    // A disabled account's key is refused as not valid: it is not revoked, and may work again.
    if (check.status === 'account_disabled') return { status: 'unknown' };
    const { key } = check;
    return { status: 'valid', keyId: key.id, accountId: key.accountId, project: key.project, scope: key.scope };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#store.close();
  }
}
