import { readdirSync, readFileSync } from 'node:fs';
import { DEFAULT_LOW_BITS } from './qaoa-kernel.ts';

/**
 * The QAOA kernel's block exponent (lowBits) for this machine: the largest block of re + im
 * (16 bytes per amplitude) that fills at most half of one core's L2 cache, so the low pass's
 * sweeps stay in L2 with room for the index and the phase table. With a 2 MiB L2 that is 2^16
 * amplitudes (1 MiB); with 512 KiB, 2^14 — the constant tuned on such a machine, and the fallback
 * where the cache size cannot be read (no Linux sysfs). Measured at n = 24 on a 2 MiB-L2 Xeon
 * (CPU time of one thread, fused passes, busy machine): 527 ms at 2^16 against 687 ms at 2^14,
 * whose 8 MiB high-pass tiles spill out of L2; at n = 20, 22 against 26 ms.
 */
export function defaultLowBits(): number {
  if (cached === undefined) cached = fromL2(l2CacheBytes());
  return cached;
}
let cached: number | undefined;

/** lowBits for an L2 of `bytes` (null: unknown), between 12 and 18. */
export function fromL2(bytes: number | null): number {
  if (bytes === null || !(bytes > 0)) return DEFAULT_LOW_BITS;
  return Math.max(12, Math.min(18, Math.floor(Math.log2(bytes / 16)) - 1));
}

/** One core's L2 size in bytes from Linux sysfs, or null. */
export function l2CacheBytes(root = '/sys/devices/system/cpu/cpu0/cache'): number | null {
  try {
    for (const entry of readdirSync(root)) {
      if (!entry.startsWith('index')) continue;
      const read = (file: string): string => readFileSync(`${root}/${entry}/${file}`, 'utf8').trim();
      if (read('level') !== '2' || read('type') === 'Instruction') continue;
      const m = /^(\d+)([KMG]?)$/.exec(read('size'));
      if (!m) return null;
      return Number(m[1]) * (m[2] === 'K' ? 1024 : m[2] === 'M' ? 1024 ** 2 : m[2] === 'G' ? 1024 ** 3 : 1);
    }
  } catch {
    // no sysfs (not Linux, or a sandbox without it): the fallback
  }
  return null;
}
