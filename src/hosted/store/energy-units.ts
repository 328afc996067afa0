/**
 * Joules at the interface, integer millijoules in the stores: sums of integers are exact, so the
 * usage report and the ledger agree to the millijoule however many rows there are.
 */
export function toMillijoules(joules: number, what: string): number {
  if (typeof joules !== 'number' || !Number.isFinite(joules) || joules < 0) {
    throw new RangeError(`${what} must be a finite, non-negative number of Joules`);
  }
  const millijoules = Math.round(joules * 1000);
  if (!Number.isSafeInteger(millijoules)) throw new RangeError(`${what} is too large`);
  return millijoules;
}

export function toJoules(millijoules: number): number {
  return millijoules / 1000;
}

/** `YYYY-MM` of a moment, UTC. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** `YYYY-MM-DD` of a moment, UTC. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

const MONTH_SHAPE = /^\d{4}-(?:0[1-9]|1[0-2])$/;

export function isMonth(value: string): boolean {
  return MONTH_SHAPE.test(value);
}
