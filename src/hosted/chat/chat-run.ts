import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Allowance } from '../../accounts/allowance.ts';
import type { JouleReservation, LedgerStore } from '../../accounts/ledger-store.ts';
import type { GenerationPart } from '../../inference/language-model.ts';
import { linkedAbort } from '../../shared/linked-abort.ts';
import type { RouteExecutor, RouteResult } from '../routing/route-executor.ts';
import { RouteRefusedError } from '../routing/route-refused-error.ts';
import type { ChatIntake } from './chat-intake.ts';
import type { ChatPlan } from './chat-plan.ts';
import { allowanceExhausted, ledgerUnavailable, shuttingDown } from './chat-errors.ts';

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

export interface ChatRun {
  executor: RouteExecutor;
  intake: ChatIntake;
  chat: ChatPlan;
  hold: JouleHold;
  reply: FastifyReply;
  /** The client left: the run stops (outcome `aborted`). */
  clientGone: AbortSignal;
  /** Shutdown's grace period ended: the run stops, and is answered as failed. */
  shutdownSignal: AbortSignal | undefined;
  /** Each part as it is produced, for a streamed answer. */
  onPart: ((part: GenerationPart) => void) | undefined;
}

/** Runs the plan over its backends under the held Joules; how it ended is the result's outcome. */
export async function runChat(run: ChatRun): Promise<RouteResult> {
  const { hold, chat, shutdownSignal } = run;
  // The reservation is the ceiling: the request stops before a token would cross it. It binds
  // (rather than x-svc-max-joules) when less was free than the request asked for.
  const allowanceBinds = hold.reservation.joules < chat.ceiling;
  // The run stops when the client leaves or when shutdown's grace period ends.
  const runAbort = linkedAbort([run.clientGone, shutdownSignal]);
  let result: RouteResult;
  try {
    result = await run.executor.execute({
      plan: chat.plan,
      messages: run.intake.messages,
      options: chat.sampling,
      maxJoules: hold.reservation.joules,
      maxLatencyMs: run.intake.headers.maxLatencyMs,
      startedAt: performance.now() - run.reply.elapsedTime,
      signal: runAbort.signal,
      onPart: run.onPart,
    });
  } catch (error) {
    if (allowanceBinds && error instanceof RouteRefusedError && error.code === 'joule_ceiling_too_low') {
      throw allowanceExhausted(hold.allowance, 'what is left cannot cover this request\'s prompt and one completion token');
    }
    throw error;
  } finally {
    runAbort.release();
  }
  // Stopped by shutdown while the client still listens: it failed, and is told so.
  if (result.outcome === 'aborted' && !run.clientGone.aborted && shutdownSignal?.aborted === true) {
    result = { ...result, outcome: 'failed', error: shuttingDown() };
  }
  return result;
}
