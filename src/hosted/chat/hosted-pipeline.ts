import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LedgerStore } from '../../accounts/ledger-store.ts';
import type { RateLimiter } from '../../accounts/limits/rate-limiter.ts';
import type { SvcRoute } from '../../accounts/svc-route.ts';
import type { RouteConfig } from '../route-config.ts';
import type { RouteExecutor } from '../routing/route-executor.ts';
import type { RoutePlan } from '../routing/route-planner.ts';
import { chargeChat } from './chat-charge.ts';
import type { ChatIntake } from './chat-intake.ts';
import { defaultQueueClass, takeChatLimit, type ChatLimits } from './chat-limits.ts';
import { planChat } from './chat-plan.ts';
import { HostedChatReply, replayStored } from './chat-reply.ts';
import { runChat } from './chat-run.ts';
import type { HostedFace } from './hosted-face.ts';
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

/** A request read in its API's shape: the intake in engine terms and the face its answer is written in. */
export interface FacedIntake {
  intake: ChatIntake;
  face: HostedFace;
}

/**
 * The one hosted generation pipeline, whichever API a request came in (chat completions,
 * Anthropic's Messages): entitlement, route planning, the Joule allowance, the backstop limiter,
 * execution over the planned backends and exactly one ledger row (with its evidence) before the
 * answer completes. Each step is a file of its own, run in this order: limits, intake
 * (entitlement and the request, the API's own reader), idempotency, plan, run (the Joule hold,
 * then the backends), evidence, then the reply, which places the charge where the outcome needs
 * it. Idempotency-Keys held in flight are shared by every API (one ledger, one key space).
 */
export class HostedPipeline {
  readonly limits: ChatLimits;
  readonly #options: HostedChatOptions;
  readonly #store: ChatStore;
  readonly #routes: RouteConfig;
  readonly #inFlight = new InFlightKeys();
  /** Requests being handled right now (the ledger write is cheaper inline when alone). */
  #running = 0;

  constructor(options: HostedChatOptions, store: ChatStore, routes: RouteConfig) {
    this.#options = options;
    this.#store = store;
    this.#routes = routes;
    this.limits = { limiter: options.limiter, routes, defaultClass: defaultQueueClass(routes) };
  }

  get executor(): RouteExecutor {
    return this.#options.executor;
  }

  /** Handles one request from the limiter take to the answer; `read` is the API's intake step. */
  async handle(request: FastifyRequest, reply: FastifyReply, read: (request: FastifyRequest) => FacedIntake): Promise<unknown> {
    const planned = await takeChatLimit(request, reply, this.limits);
    const { intake, face } = read(request);
    const key = await claimIdempotencyKey(this.#store, this.#inFlight, request.hostedIdentity!.account.id, intake.idempotencyKey);
    if (key.replay !== undefined) return replayStored(reply, face, key.replay, intake.hash, intake.stream);
    this.#running++;
    try {
      return await this.#answer(request, reply, intake, face, planned);
    } finally {
      this.#running--;
      key.release?.();
    }
  }

  async #answer(request: FastifyRequest, reply: FastifyReply, intake: ChatIntake, face: HostedFace, planned: RoutePlan | undefined): Promise<unknown> {
    const identity = request.hostedIdentity!;
    const store = this.#store;
    const options = this.#options;
    const chat = planChat(this.#routes, request, reply, intake, planned);
    const hold = await JouleHold.take(store, request, chat.ceiling);
    try {
      const out = new HostedChatReply(reply, face, chat.plan.model, intake.stream);
      const result = await runChat({ executor: options.executor, intake, chat, hold, reply, clientGone: out.clientGone, shutdownSignal: options.shutdownSignal, onPart: out.onPart });
      const answered = out.answer(result, svcRouteEvidence(result.route, identity.key.id, options.signEvidence));
      const alone = this.#running === 1;
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
}
