/** Refuses a time to live that is not a positive, finite number of milliseconds. */
export function requireTtl(ttlMs: number, what: string): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`${what} must be a positive number of milliseconds`);
}
