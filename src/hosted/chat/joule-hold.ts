import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Allowance } from '../../accounts/allowance.ts';
import type { JouleReservation, LedgerStore } from '../../accounts/ledger-store.ts';
import { allowanceExhausted, ledgerUnavailable } from './chat-errors.ts';

/**
 * The Joules a request holds while it runs, from before it runs until its charge takes them
 * over (the store gives them back once the row is stored, or storing failed); a request that
 * never reaches its charge gives them back itself.
 */
export class JouleHold {
  readonly reservation: JouleReservation;
  /** The month's allowance as the store saw it when it granted the hold. */
  readonly allowance: Allowance;
  readonly #store: Pick<LedgerStore, 'releaseReservation'>;
  #handedOver = false;

  private constructor(store: Pick<LedgerStore, 'releaseReservation'>, reservation: JouleReservation, allowance: Allowance) {
    this.#store = store;
    this.reservation = reservation;
    this.allowance = allowance;
  }

  /**
   * Holds the request's Joules, atomically with every other request of the account (on every
   * replica): concurrent requests cannot each spend what is left. What it holds is its ceiling,
   * never more than the whole allowance (no grant could be larger, and a ceiling of 10^14 J is a
   * valid header, not a number the store should see). Nothing free is 402.
   */
  static async take(store: Pick<LedgerStore, 'reserveJoules' | 'releaseReservation'>, request: FastifyRequest, ceiling: number): Promise<JouleHold> {
    const identity = request.hostedIdentity!;
    const wanted = Math.min(ceiling, identity.allowance.allowanceJoules);
    let reserved;
    try {
      reserved = await store.reserveJoules({ accountId: identity.account.id, joules: wanted, seen: identity.allowance });
    } catch (error) {
      request.log.error({ err: error }, 'reserving Joules failed: the hosted store did not answer');
      throw ledgerUnavailable();
    }
    const { reservation, allowance } = reserved;
    if (reservation === undefined) {
      throw allowanceExhausted(allowance, allowance.usedJoules >= allowance.allowanceJoules ? 'it is used up' : 'what is left is held by this account\'s requests running now');
    }
    return new JouleHold(store, reservation, allowance);
  }

  /** The reservation, for the charge: from here on the store gives it back. */
  handOver(): JouleReservation {
    this.#handedOver = true;
    return this.reservation;
  }

  /** Gives the Joules back unless a charge took them over. */
  async releaseUnlessHandedOver(log: FastifyBaseLogger): Promise<void> {
    if (this.#handedOver) return;
    await this.#store.releaseReservation(this.reservation).catch((error: unknown) => log.error({ err: error }, 'releasing a Joule reservation failed'));
  }
}
