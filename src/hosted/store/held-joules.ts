/**
 * The embedded store's Joule reservations, in memory. An embedded store is served by one process
 * (replicas share PostgreSQL, which keeps reservations in a table), so this map is every
 * reservation there is; a crash drops them with the requests they held for. Amounts are integer
 * millijoules, like the store's counters.
 */
export class HeldJoules {
  readonly #byId = new Map<string, { key: string; mj: number }>();
  readonly #totals = new Map<string, number>();
  #releases = 0;

  /** Counts every release: a read of the month's usage that saw it change may have missed a charge that came with it. */
  get releases(): number {
    return this.#releases;
  }

  /** Millijoules held for the account's month. */
  held(accountId: string, month: string): number {
    return this.#totals.get(keyOf(accountId, month)) ?? 0;
  }

  hold(id: string, accountId: string, month: string, mj: number): void {
    const key = keyOf(accountId, month);
    this.#byId.set(id, { key, mj });
    this.#totals.set(key, (this.#totals.get(key) ?? 0) + mj);
  }

  /** Idempotent: a reservation released twice is given back once. */
  release(id: string): void {
    const entry = this.#byId.get(id);
    if (entry === undefined) return;
    this.#byId.delete(id);
    this.#releases++;
    const left = (this.#totals.get(entry.key) ?? 0) - entry.mj;
    if (left <= 0) this.#totals.delete(entry.key);
    else this.#totals.set(entry.key, left);
  }
}

// Account ids never hold NUL, so the pair cannot collide with another pair.
function keyOf(accountId: string, month: string): string {
  return `${accountId}\u0000${month}`;
}
