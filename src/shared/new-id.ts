import { randomFillSync } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * Random bytes are drawn from the CSPRNG in 4 KiB batches: `randomBytes(24)` per identifier cost
 * one getrandom call each (about 5 µs, several per request on the hosted chat path); a batch
 * costs the same once per ~170 identifiers. This is what `crypto.randomUUID()` does internally.
 */
const POOL = Buffer.alloc(4096);
let used = POOL.length;

/** A random, URL-safe identifier with a type prefix, e.g. `chatcmpl-…`, `qj_…`. */
export function newId(prefix: string, length = 24): string {
  if (!Number.isInteger(length) || length < 1 || length > POOL.length) throw new RangeError(`identifier length must be 1..${POOL.length}, got ${length}`);
  if (used + length > POOL.length) {
    randomFillSync(POOL);
    used = 0;
  }
  let out = prefix;
  // 62 does not divide 256, so the bias is < 1%: fine for identifiers, never used as a secret.
  for (let k = used; k < used + length; k++) out += ALPHABET[POOL[k]! % ALPHABET.length];
  // each byte serves one identifier only
  used += length;
  return out;
}

/** 36⁹ ms is about 3,200 years: nine characters hold every Unix time in ms until the year 5188. */
const TIME_LENGTH = 9;
let lastMs = -1;
let lastTime = '';

/**
 * The Unix time in ms as nine base-36 characters, most significant first (fixed width, so it
 * sorts). Base 36 is digits and lowercase only, which every collation (C, ICU, glibc locales)
 * sorts in that order.
 */
export function encodeTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 36 ** TIME_LENGTH) throw new RangeError(`time must be 0..36^${TIME_LENGTH} ms, got ${ms}`);
  return ms.toString(36).padStart(TIME_LENGTH, '0');
}

/**
 * A time-ordered identifier (like a ULID or UUIDv7): the creation time in ms, then `randomLength`
 * random characters of `newId`'s alphabet (16 by default: about 95 bits, so two in the same
 * millisecond collide with negligible odds). Used where the identifier is a database key that only
 * grows, such as the ledger's evidence ids: a random key puts each new row in a random leaf of the
 * key's B-tree, so a batch of k rows rewrites k leaf pages (and, once the index outgrows the page
 * cache, reads them first); time-ordered keys land on the rightmost leaf. (In a ledger that already
 * holds random ids they all fall in one spot among the old ones, `ev_0…`: still one hot leaf.)
 * Within one millisecond, or if the clock steps back, the order is approximate; uniqueness rests
 * on the random part alone.
 */
export function newTimeOrderedId(prefix: string, randomLength = 16, now = Date.now()): string {
  if (now !== lastMs) {
    lastTime = encodeTime(now);
    lastMs = now;
  }
  return newId(prefix + lastTime, randomLength);
}
