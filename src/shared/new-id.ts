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
