import { randomFillSync } from 'node:crypto';

/** A source of uniform doubles in [0, 1). */
export interface Rng {
  next(): number;
}

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/**
 * Hashes a seed to four non-zero 32-bit words (cyrb128-style mixing of the seed's string form),
 * so nearby seeds (1, 2, "1") give unrelated streams.
 */
function seedWords(seed: number | string): [number, number, number, number] {
  const text = typeof seed === 'number' ? `n:${seed}` : `s:${seed}`;
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  const words: [number, number, number, number] = [
    (h1 ^ h2 ^ h3 ^ h4) >>> 0,
    (h2 ^ h1) >>> 0,
    (h3 ^ h1) >>> 0,
    (h4 ^ h1) >>> 0,
  ];
  if ((words[0] | words[1] | words[2] | words[3]) === 0) words[0] = 1;
  return words;
}

/**
 * xoshiro128** (Blackman & Vigna), seeded through a hash of `seed`. Each `next()` combines two
 * 32-bit outputs into a double with 53 random bits, so probabilities below 2^-32 are still
 * resolved when sampling. Deterministic across platforms: same seed, same stream.
 */
export function seededRng(seed: number | string): Rng {
  let [a, b, c, d] = seedWords(seed);
  const next32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
  return {
    next(): number {
      const hi = next32() >>> 5; // 27 bits
      const lo = next32() >>> 6; // 26 bits
      return (hi * 67108864 + lo) / TWO_POW_53;
    },
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/**
 * Uniform doubles from the operating system's CSPRNG (node:crypto), drawn in buffered blocks.
 * Used where measurement randomness must be real (e.g. the QRNG solver on a simulator).
 */
export function cryptoRng(bufferWords = 2048): Rng {
  const buf = new Uint32Array(bufferWords - (bufferWords % 2) || 2);
  let pos = buf.length;
  return {
    next(): number {
      if (pos >= buf.length) {
        randomFillSync(buf);
        pos = 0;
      }
      const hi = buf[pos]! >>> 5;
      const lo = buf[pos + 1]! >>> 6;
      pos += 2;
      return (hi * 67108864 + lo) / TWO_POW_53;
    },
  };
}

/** A uniform 32-bit unsigned integer from an Rng (helper for callers that need integers). */
export function nextUint32(rng: Rng): number {
  return Math.floor(rng.next() * TWO_POW_32) >>> 0;
}
