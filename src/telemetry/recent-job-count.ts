/** What `daily_job_count` covers: the jobs that finished in the last 24 hours. */
export const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;

/**
 * Jobs finished in the last 24 hours, counted per minute: memory stays at most 1440 counters
 * however busy the daemon is, and the window is exact to the minute. It counts what this process
 * ran: the first scheduled report goes 24 hours after start, so by then the window is this
 * process's own (a restart does not read old logs back).
 */
export class RecentJobCount {
  readonly #perMinute = new Map<number, number>();
  #lastMinute = Number.NaN;

  add(now: number): void {
    const minute = Math.floor(now / MINUTE_MS);
    this.#perMinute.set(minute, (this.#perMinute.get(minute) ?? 0) + 1);
    // Old minutes can only have fallen out of the window when the minute changed.
    if (minute !== this.#lastMinute) this.#prune(now);
    this.#lastMinute = minute;
  }

  /** Jobs in the 24 hours up to `now`. */
  count(now: number): number {
    this.#prune(now);
    let total = 0;
    for (const n of this.#perMinute.values()) total += n;
    return total;
  }

  #prune(now: number): void {
    const oldest = Math.floor((now - DAY_MS) / MINUTE_MS);
    for (const minute of this.#perMinute.keys()) if (minute <= oldest) this.#perMinute.delete(minute);
  }
}
