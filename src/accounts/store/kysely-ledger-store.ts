import { sql, type CompiledQuery } from 'kysely';
import type { Allowance } from '../allowance.ts';
import type { ChargeInput, ChargeResult, JouleReservation, LedgerEntry, LedgerStore, ReserveInput, ReserveResult } from '../ledger-store.ts';
import { newId } from '../../shared/new-id.ts';
import { allowanceOf, type AllowanceFigures } from './allowance-of.ts';
import { monthOf, toJoules, toMillijoules } from './energy-units.ts';
import { HeldJoules } from './held-joules.ts';
import { LEDGER_COLUMNS, ledgerRow, toLedgerEntry } from './ledger-rows.ts';
import { requireTtl } from './require-ttl.ts';
import type { StoreHandle } from './store-handle.ts';

/** How long a reservation its replica never settled keeps counting (longer than any request runs). */
const DEFAULT_RESERVATION_TTL_MS = 60 * 60_000;
/** How often a store deletes expired reservations (housekeeping: they stop counting when they expire). */
const RESERVATION_SWEEP_MS = 60_000;

/**
 * The Joule ledger over Kysely: allowances, reservations, charges and their idempotency.
 * Reservations are where the engines differ: the embedded store holds them in memory
 * (held-joules.ts; one process serves it), PostgreSQL in a table its functions lock
 * (hosted-migrations.ts), so replicas share them.
 */
export class KyselyLedgerStore implements LedgerStore {
  readonly #handle: StoreHandle;
  /** The embedded store's reservations (one process serves it); PostgreSQL keeps them in joule_reservations. */
  readonly #held: HeldJoules | undefined;
  /** Allowances checkKey read (embedded store): their figures and the release count they were read at. */
  readonly #allowanceReads = new WeakMap<Allowance, { accountId: string; allowanceMj: number; usedMj: number; releases: number }>();
  #lastReservationSweep = 0;

  constructor(handle: StoreHandle) {
    this.#handle = handle;
    this.#held = handle.kind === 'sqlite' ? new HeldJoules() : undefined;
  }

  /**
   * Keeps what a key check read (kysely-key-store.ts), on the embedded store: a reservation
   * that is handed the same allowance as `seen` then need not read it again.
   */
  rememberAllowance(allowance: Allowance, figures: AllowanceFigures): void {
    if (this.#held !== undefined) this.#allowanceReads.set(allowance, { ...figures, releases: this.#held.releases });
  }

  async allowance(accountId: string, at: Date = new Date()): Promise<Allowance> {
    return this.#handle.allowanceFor(accountId, monthOf(at));
  }

  async reserveJoules(input: ReserveInput): Promise<ReserveResult> {
    const at = input.at ?? new Date();
    const month = monthOf(at);
    const askedMj = toMillijoules(input.joules, 'joules');
    const ttlMs = input.ttlMs ?? DEFAULT_RESERVATION_TTL_MS;
    requireTtl(ttlMs, 'ttlMs');
    const id = newId('jr_');
    const grant = (allowanceMj: number, usedMj: number, heldMj: number) => {
      const freeMj = Math.max(0, allowanceMj - usedMj - heldMj);
      const allowance = { ...allowanceOf(month, allowanceMj, usedMj), remainingJoules: toJoules(freeMj) };
      return { grantedMj: Math.min(askedMj, freeMj), allowance };
    };
    const held = this.#held;
    if (held !== undefined) {
      held.expire(at.getTime());
      // The month's use as read with the key, when nothing was released since: a charge stored after
      // that read is still held, so it is counted. Otherwise read it, and hold in the same
      // synchronous step where the read is synchronous (the hot path). Where the read had to wait, a
      // charge may have been stored and its reservation released meanwhile: a read that saw a
      // release is taken again, so no Joule is counted by neither.
      const seen = input.seen === undefined ? undefined : this.#allowanceReads.get(input.seen);
      for (;;) {
        const releases = held.releases;
        let figures: { allowanceMj: number; usedMj: number };
        if (seen !== undefined && seen.releases === releases && seen.accountId === input.accountId && input.seen!.month === month) {
          figures = seen;
        } else {
          const row = (await this.#handle.rows(this.#handle.allowanceQuery.bind([month, input.accountId])))[0];
          if (held.releases !== releases) continue;
          figures = { allowanceMj: row === undefined ? 0 : Number(row.monthly_allowance_mj), usedMj: row?.used_mj == null ? 0 : Number(row.used_mj) };
        }
        const { grantedMj, allowance } = grant(figures.allowanceMj, figures.usedMj, held.held(input.accountId, month));
        if (grantedMj <= 0) return { reservation: undefined, allowance };
        held.hold(id, input.accountId, month, grantedMj, at.getTime() + ttlMs);
        return { reservation: { id, accountId: input.accountId, month, joules: toJoules(grantedMj) }, allowance };
      }
    }
    this.#sweepReservations(at.getTime());
    // PostgreSQL: one call (hosted-migrations.ts, svc_reserve_joules) locks the account's row,
    // grants from what its allowance has free after use and other unexpired reservations, and
    // records the reservation; grants of one account are serialized across replicas by that lock.
    const { rows } = await sql<{ allowance_mj: string; used_mj: string; held_mj: string; granted_mj: string }>`select * from svc_reserve_joules(${input.accountId}, ${month}, ${askedMj}, ${id}, ${at.getTime()}, ${at.getTime() + ttlMs})`.execute(this.#handle.db);
    const row = rows[0];
    const { allowance } = grant(Number(row?.allowance_mj ?? 0), Number(row?.used_mj ?? 0), Number(row?.held_mj ?? 0));
    const grantedMj = Number(row?.granted_mj ?? 0);
    if (grantedMj <= 0) return { reservation: undefined, allowance };
    return { reservation: { id, accountId: input.accountId, month, joules: toJoules(grantedMj) }, allowance };
  }

  async releaseReservation(reservation: JouleReservation): Promise<void> {
    if (this.#held !== undefined) {
      this.#held.release(reservation.id);
      return;
    }
    await sql`select svc_release_joules(${reservation.id})`.execute(this.#handle.db);
  }

  /** Deletes lapsed reservations (their replica never settled them) now and then: they stopped counting when they lapsed. */
  #sweepReservations(now: number): void {
    if (now - this.#lastReservationSweep < RESERVATION_SWEEP_MS) return;
    this.#lastReservationSweep = now;
    void this.#handle.db.deleteFrom('joule_reservations').where('expires_at', '<=', now).execute().catch(() => {});
  }

  async recordCharge(input: ChargeInput): Promise<ChargeResult> {
    const { reservation } = input;
    if (reservation === undefined) return this.#recordCharge(input);
    // Stored (its Joules count in the month's use now) or not stored (nothing to hold for): given back
    // either way. The embedded store's is in memory; PostgreSQL's goes with the row (its insert
    // trigger), and only a row not stored leaves it to release here.
    const held = this.#held;
    let released = held !== undefined;
    try {
      const result = await this.#recordCharge(input);
      released ||= result.status === 'recorded';
      return result;
    } finally {
      if (held !== undefined) held.release(reservation.id);
      else if (!released) await this.releaseReservation(reservation).catch(() => {});
    }
  }

  async #recordCharge(input: ChargeInput): Promise<ChargeResult> {
    const row = ledgerRow(input, this.#held === undefined);
    // One statement: the ledger row, and (its AFTER INSERT trigger, migration 0002) the month's
    // counter, atomically. ON CONFLICT DO NOTHING rather than catching a unique violation: a
    // concurrent twin with the same Idempotency-Key waits for the first and inserts nothing
    // (nor does its trigger run), and the first one's row is what the caller gets back.
    const insert = this.#handle.insertLedgerQuery.bind(LEDGER_COLUMNS.map((column) => row[column]));
    if (await this.#insertLedgerRow(insert, row.evidence_id, input.alone === true)) return { status: 'recorded', entry: toLedgerEntry(row) };
    const existing = await this.#handle.db
      .selectFrom('ledger')
      .selectAll()
      .where('account_id', '=', row.account_id)
      .where('idempotency_key', '=', row.idempotency_key)
      .executeTakeFirstOrThrow();
    return { status: 'duplicate', entry: toLedgerEntry(existing) };
  }

  /** True when the row was stored, false when its Idempotency-Key was taken (nothing stored). */
  async #insertLedgerRow(insert: CompiledQuery<{ evidence_id: string }>, evidenceId: string, alone: boolean): Promise<boolean> {
    const rows = await this.#handle.write('insert', insert, {
      alone,
      // The thread may have died with this row committed: it is stored then, once.
      alreadyStored: async () => (await this.#handle.db.selectFrom('ledger').select('evidence_id').where('evidence_id', '=', evidenceId).executeTakeFirst()) !== undefined,
    });
    return rows > 0;
  }

  async findEvidence(accountId: string, evidenceId: string): Promise<LedgerEntry | undefined> {
    const row = await this.#handle.db.selectFrom('ledger').selectAll().where('evidence_id', '=', evidenceId).where('account_id', '=', accountId).executeTakeFirst();
    return row === undefined ? undefined : toLedgerEntry(row);
  }

  async findByIdempotencyKey(accountId: string, idempotencyKey: string): Promise<LedgerEntry | undefined> {
    const row = await this.#handle.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
    return row === undefined ? undefined : toLedgerEntry(row);
  }

  async releaseIdempotencyKeys(before: Date): Promise<number> {
    const cutoff = before.getTime();
    if (!Number.isFinite(cutoff)) throw new RangeError('before is not a valid date');
    const result = await this.#handle.db
      .updateTable('ledger')
      .set({ idempotency_key: null, response: null })
      .where('idempotency_key', 'is not', null)
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
