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

/**
 * The UTC day last formatted, kept because every hosted request asks for its month and day
 * (a key check, a ledger row) and formatting a date each time was a measurable part of one.
 */
let lastDay = { start: 0, end: 0, day: '1970-01-01' };
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a moment, UTC. */
export function dayOf(at: Date): string {
  const ms = at.getTime();
  if (ms >= lastDay.start && ms < lastDay.end) return lastDay.day;
  const day = at.toISOString().slice(0, 10);
  // Only real dates are kept (an invalid one throws above); the day is [start, start + 1 day).
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  lastDay = { start, end: start + DAY_MS, day };
  return day;
}

/** `YYYY-MM` of a moment, UTC. */
export function monthOf(at: Date): string {
  return dayOf(at).slice(0, 7);
}

const MONTH_SHAPE = /^\d{4}-(?:0[1-9]|1[0-2])$/;

export function isMonth(value: string): boolean {
  return MONTH_SHAPE.test(value);
}
