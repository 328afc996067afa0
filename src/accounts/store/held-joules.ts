/**
 * The embedded store's Joule reservations, in memory. An embedded store is served by one process
 * (replicas share PostgreSQL, which keeps reservations in a table), so this map is every
 * reservation there is; a crash drops them with the requests they held for. Amounts are integer
 * millijoules, like the store's counters.
 */
export class HeldJoules {
  /** In the order held: with one time to live for all, also the order they expire in. */
  readonly #byId = new Map<string, { key: string; mj: number; expiresAt: number }>();
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

  hold(id: string, accountId: string, month: string, mj: number, expiresAt: number): void {
    const key = keyOf(accountId, month);
    this.#byId.set(id, { key, mj, expiresAt });
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

  /**
   * Releases what expired by `now`: a reservation a bug never gave back stops holding the
   * account's allowance after its time to live, as on PostgreSQL, not until a restart.
   */
  expire(now: number): void {
    for (const [id, entry] of this.#byId) {
      if (entry.expiresAt > now) break;
      this.release(id);
    }
  }
}

// Account ids never hold NUL, so the pair cannot collide with another pair.
function keyOf(accountId: string, month: string): string {
  return `${accountId}\u0000${month}`;
}
