import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LedgerStore } from '../../accounts/ledger-store.ts';
import type { RateLimiter } from '../../accounts/limits/rate-limiter.ts';
import type { SvcRoute } from '../../accounts/svc-route.ts';
import type { HostedPlugin } from '../hosted-plugin.ts';
import type { RouteExecutor } from '../routing/route-executor.ts';
import type { RoutePlan } from '../routing/route-planner.ts';
import { chargeChat } from './chat-charge.ts';
import { chatFace } from './chat-face.ts';
import { readChatRequest, type ChatIntake } from './chat-intake.ts';
import { addChatLimitHeaders, defaultQueueClass, takeChatLimit, type ChatLimits } from './chat-limits.ts';
import { planChat } from './chat-plan.ts';
import { HostedChatReply, replayStored } from './chat-reply.ts';
import { runChat } from './chat-run.ts';
import { JouleHold } from './joule-hold.ts';
import { claimIdempotencyKey, InFlightKeys } from './idempotency.ts';
import { svcRouteEvidence } from './svc-route-evidence.ts';

export interface HostedChatOptions {
  executor: RouteExecutor;
  /** The backstop limiter, per key, account and queue class; none: no rate refusals (tests of other things). */
  limiter?: RateLimiter | undefined;
  /** Aborted when shutdown's grace period ends: running generations stop, billed, with a 503 error. */
  shutdownSignal?: AbortSignal | undefined;
  /** Signs each `svc_route` (an ML-DSA transport identity); none: evidence goes unsigned. */
  signEvidence?: ((route: SvcRoute) => SvcRoute) | undefined;
}

/** The part of the store chat uses: the ledger's keys, holds and rows. */
export type ChatStore = Pick<LedgerStore, 'findByIdempotencyKey' | 'reserveJoules' | 'releaseReservation' | 'recordCharge'>;

/**
 * `POST /chat/completions` on the hosted tier: the local route's request shape and chunks, plus
 * entitlement, route planning, the Joule allowance, the backstop limiter, execution over the
 * planned backends and exactly one ledger row (with its evidence) before the answer completes.
 * Each step is a file of its own, run in this order: limits, intake (entitlement and the
 * request), idempotency, plan, run (the Joule hold, then the backends), evidence, then the reply,
 * which places the charge where the outcome needs it.
 */
export function hostedChatPlugin(options: HostedChatOptions): HostedPlugin<ChatStore> {
  const inFlight = new InFlightKeys();
  /** Chat requests being handled right now (the ledger write is cheaper inline when alone). */
  let running = 0;
  return async (scope, context) => {
    const { store, routes } = context;
    const limits: ChatLimits = { limiter: options.limiter, routes, defaultClass: defaultQueueClass(routes) };
    addChatLimitHeaders(scope, limits.defaultClass);

    // The key alone: the backstop take comes first in the handler, with the request's queue class.
    scope.post('/chat/completions', { preHandler: context.authenticateKey }, async (request, reply) => {
      const planned = await takeChatLimit(request, reply, limits);
      const intake = readChatRequest(request);
      const key = await claimIdempotencyKey(store, inFlight, request.hostedIdentity!.account.id, intake.idempotencyKey);
      if (key.replay !== undefined) return replayStored(reply, chatFace, key.replay, intake.hash, intake.stream);
      running++;
      try {
        return await answer(request, reply, intake, planned);
      } finally {
        running--;
        key.release?.();
      }
    });

    async function answer(request: FastifyRequest, reply: FastifyReply, intake: ChatIntake, planned: RoutePlan | undefined): Promise<unknown> {
      const identity = request.hostedIdentity!;
      const chat = planChat(routes, request, reply, intake, planned);
      const hold = await JouleHold.take(store, request, chat.ceiling);
      try {
        const out = new HostedChatReply(reply, chatFace, chat.plan.model, intake.stream);
        const result = await runChat({ executor: options.executor, intake, chat, hold, reply, clientGone: out.clientGone, shutdownSignal: options.shutdownSignal, onPart: out.onPart });
        const answered = out.answer(result, svcRouteEvidence(result.route, identity.key.id, options.signEvidence));
        const alone = running === 1;
        return await out.send(answered, intake.hash, () => chargeChat(store, {
          request, result, route: answered.route, completion: answered.completion,
          projectId: intake.headers.projectId ?? identity.key.project ?? undefined,
          idempotencyKey: intake.idempotencyKey, hash: intake.hash, stream: intake.stream, alone,
          reservation: hold.handOver(),
        }));
      } finally {
        // A request that never reached its charge gives its Joules back (a charge gives them back itself).
        await hold.releaseUnlessHandedOver(request.log);
      }
    }
  };
}
