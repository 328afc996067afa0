import type { Allowance } from './allowance.ts';
import type { SvcRoute } from './svc-route.ts';

/** One ledger row: a billable request and its evidence, written atomically with the usage counter. */
export interface LedgerEntry {
  evidenceId: string;
  accountId: string;
  keyId: string;
  projectId: string | null;
  idempotencyKey: string | null;
  createdAt: Date;
  route: SvcRoute;
  /** Token counts of the request, as the backend reported them. */
  promptTokens: number;
  completionTokens: number;
  /** How the request ended: `completed`, `stopped_at_joule_ceiling`, `failed` (failed ones bill what ran). */
  outcome: string;
  /** The stored response for idempotent replays (non-streamed JSON, or the assembled stream), if kept. */
  response: unknown;
}

export type ChargeInput = Omit<LedgerEntry, 'createdAt'> & {
  at?: Date;
  /**
   * No other hosted chat request is in flight in this process. The embedded store then writes the row
   * on its own connection at once, when its writer thread is idle: handing one row to the
   * thread and waking it costs more than the write (ledger-writer.ts); under load rows go to the
   * thread and commit in groups. Other stores ignore it.
   */
  alone?: boolean;
  /** The Joules held for this request (reserveJoules): given back once the row is stored, or when the charge fails. */
  reservation?: JouleReservation | undefined;
};

/**
 * Joules of an account's allowance held for one running request (`reserveJoules`), so that
 * requests running at the same time, on any replica, cannot each spend what is left.
 */
export interface JouleReservation {
  id: string;
  accountId: string;
  /** `YYYY-MM`, UTC: the month whose allowance holds it. */
  month: string;
  /** What was granted: never more than asked, never more than was free. */
  joules: number;
}

export interface ReserveInput {
  accountId: string;
  /** The most this request may cost (its ceiling). */
  joules: number;
  /** A reservation never settled (its replica died) stops counting after this long; default 1 hour. */
  ttlMs?: number | undefined;
  at?: Date | undefined;
  /**
   * The allowance this store's `checkKey` read for the request, moments ago: the embedded store
   * uses it instead of reading again when nothing was released since (any charge stored after
   * it is then still held). Other stores, and a stale one, read afresh.
   */
  seen?: Allowance | undefined;
}

export interface ReserveResult {
  /** Undefined when nothing of the allowance is free. */
  reservation: JouleReservation | undefined;
  /** The month's allowance before this grant; `remainingJoules` is what was free (used and held subtracted). */
  allowance: Allowance;
}

export type ChargeResult =
  /** Written now: the ledger row and the account's monthly counter moved together. */
  | { status: 'recorded'; entry: LedgerEntry }
  /** The same `Idempotency-Key` was already billed for this account: nothing was written. */
  | { status: 'duplicate'; entry: LedgerEntry };

/**
 * The Joule ledger: the month's allowance, reservations held by running requests, the billed
 * rows with their evidence, and the Idempotency-Keys that make a retried request bill once.
 */
export interface LedgerStore {
  allowance(accountId: string, at?: Date): Promise<Allowance>;
  /**
   * Holds up to `joules` of the account's allowance for one request, atomically with every other
   * reservation of the account (across replicas on PostgreSQL): the grant is the smaller of what
   * is asked and what is free after the month's usage and the other requests' reservations.
   */
  reserveJoules(input: ReserveInput): Promise<ReserveResult>;
  /** Gives a reservation back (its request failed before anything was billed). Idempotent. */
  releaseReservation(reservation: JouleReservation): Promise<void>;
  /**
   * Atomic: the ledger row with its evidence and the monthly counter, or nothing; idempotent per
   * account and key. The input's reservation is given back once the row is stored (the row's
   * Joules then count instead), or if storing fails.
   */
  recordCharge(input: ChargeInput): Promise<ChargeResult>;
  findEvidence(accountId: string, evidenceId: string): Promise<LedgerEntry | undefined>;
  findByIdempotencyKey(accountId: string, idempotencyKey: string): Promise<LedgerEntry | undefined>;
  /**
   * Forgets the Idempotency-Keys (and the answers kept for their replays) of ledger rows created
   * before `before`: the rows, their evidence and Joules stay; the keys may be used again.
   * Returns how many rows were released.
   */
  releaseIdempotencyKeys(before: Date): Promise<number>;
}
