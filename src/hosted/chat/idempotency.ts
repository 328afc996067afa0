import { hash } from 'node:crypto';
import type { LedgerEntry, LedgerStore } from '../../accounts/ledger-store.ts';
import { quoteInput } from '../../shared/quote-input.ts';
import { HostedError } from '../hosted-error.ts';
import { ledgerUnavailable } from './chat-errors.ts';

/** What a ledger row keeps for replays: the request's fingerprint and the answer it got. */
export interface StoredChatResponse {
  request_hash: string;
  stream: boolean;
  /** The whole `chat.completion` object (a stream's parts assembled into one). */
  completion: Record<string, unknown>;
}

export function isStoredChatResponse(value: unknown): value is StoredChatResponse {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.request_hash === 'string' && typeof v.stream === 'boolean' && typeof v.completion === 'object' && v.completion !== null;
}

/**
 * `Idempotency-Key`: 1 to 255 printable ASCII characters (Stripe allows 255), sent once.
 * Undefined when absent.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) {
    throw new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_idempotency_key', message: 'Idempotency-Key was sent more than once; send it once.', param: 'Idempotency-Key' });
  }
  const key = header.trim();
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new HostedError({
      status: 400, type: 'invalid_request_error', code: 'invalid_idempotency_key',
      message: `Idempotency-Key must be 1 to 255 printable characters without spaces (got ${quoteInput(key)}).`, param: 'Idempotency-Key',
    });
  }
  return key;
}

/**
 * The fingerprint a key is bound to: the JSON body as received plus the route headers that
 * change what runs or how it is billed. Reusing a key for anything else is a client bug.
 */
export function requestHash(body: unknown, routeHeaders: Readonly<Record<string, unknown>>): string {
  return hash('sha256', JSON.stringify({ body, routeHeaders }), 'hex');
}

/**
 * Keys whose first request is still running in this process: a retry that arrives meanwhile
 * gets 409 instead of a second run. Across replicas the ledger's unique (account, key) is
 * what holds: both may run, one is billed, and the other answers with the stored response.
 */
export class InFlightKeys {
  readonly #keys = new Set<string>();

  claim(accountId: string, key: string): (() => void) | undefined {
    const id = `${accountId}\u0000${key}`;
    if (this.#keys.has(id)) return undefined;
    this.#keys.add(id);
    return () => this.#keys.delete(id);
  }
}

export function keyReused(): HostedError {
  return new HostedError({
    status: 422, type: 'invalid_request_error', code: 'idempotency_key_reused',
    message: 'This Idempotency-Key was already used with a different request body or route headers; use a new key for a new request.', param: 'Idempotency-Key',
  });
}

export function keyInProgress(): HostedError {
  return new HostedError({
    status: 409, type: 'invalid_request_error', code: 'idempotency_key_in_progress',
    message: 'A request with this Idempotency-Key is still running; retry after it finishes to get its stored response.', param: 'Idempotency-Key', retryAfterSeconds: 1,
  });
}

/** What the idempotency step found: the stored answer to a retry, or the key held while this request runs. */
export type KeyClaim =
  | { replay: LedgerEntry; release?: undefined }
  /** `release` frees the key once the request ends; undefined for a request without one. */
  | { replay?: undefined; release: (() => void) | undefined };

/**
 * A request with an Idempotency-Key: a retry of one already billed is answered from the ledger
 * (replayStored), one whose first request still runs here is 409, and otherwise the key is held.
 */
export async function claimIdempotencyKey(
  store: Pick<LedgerStore, 'findByIdempotencyKey'>, inFlight: InFlightKeys, accountId: string, key: string | undefined,
): Promise<KeyClaim> {
  if (key === undefined) return { release: undefined };
  const previous = await store.findByIdempotencyKey(accountId, key).catch(() => {
    throw ledgerUnavailable();
  });
  if (previous !== undefined) return { replay: previous };
  const release = inFlight.claim(accountId, key);
  if (release === undefined) throw keyInProgress();
  return { release };
}
