import type { FastifyReply } from 'fastify';
import type { GenerationPart } from '../../inference/language-model.ts';
import { linkedAbort } from '../../shared/linked-abort.ts';
import type { RouteExecutor, RouteResult } from '../routing/route-executor.ts';
import { RouteRefusedError } from '../routing/route-refused-error.ts';
import type { ChatIntake } from './chat-intake.ts';
import type { ChatPlan } from './chat-plan.ts';
import { allowanceExhausted, shuttingDown } from './chat-errors.ts';
import type { JouleHold } from './joule-hold.ts';

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
