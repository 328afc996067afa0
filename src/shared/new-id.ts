import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A random, URL-safe identifier with a type prefix, e.g. `chatcmpl-…`, `qj_…`. */
export function newId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = prefix;
  // 62 does not divide 256, so the bias is < 1%: fine for identifiers, never used as a secret.
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}
