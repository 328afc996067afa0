import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitHeaders, upstreamUnavailableHeaders } from '../../accounts/limits/rate-limit-headers.ts';
import { RateLimitedError } from '../../accounts/limits/rate-limited-error.ts';
import type { BackpressureState, RateLimiter } from '../../accounts/limits/rate-limiter.ts';
import { toHostedError } from '../hosted-error.ts';
import type { RouteConfig } from '../route-config.ts';
import type { QueueClass } from '../../accounts/limits/queue-classes.ts';
import { parseRouteHeaders } from '../routing/route-headers.ts';
import { planRoute, type RoutePlan } from '../routing/route-planner.ts';
import { rawBodyOf } from './chat-intake.ts';

/** The backstop limiter, per key, account and queue class; none: no rate refusals (tests of other things). */
export interface ChatLimits {
  limiter: RateLimiter | undefined;
  routes: RouteConfig;
  /** The default policy's queue class: a request's until it is planned. */
  defaultClass: QueueClass;
}

export function defaultQueueClass(routes: RouteConfig): QueueClass {
  return routes.routes.find((r) => r.policy === routes.default_policy)?.queue_class ?? 'interactive';
}

/** The backpressure a request's limiter decision reported, for its 502/503 headers. */
const BACKPRESSURE = Symbol('svc.backpressure');
type WithBackpressure = FastifyRequest & { [BACKPRESSURE]?: BackpressureState };

/**
 * Every answer names its queue class, and a 502/503 carries the same headers as a 429 (the
 * contract's "rate limits or upstream unavailability").
 */
export function addChatLimitHeaders(scope: FastifyInstance, defaultClass: QueueClass): void {
  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('x-svc-queue-class', defaultClass);
  });
  scope.addHook('onError', async (request, reply, error) => {
    const apiError = toHostedError(error);
    if (apiError.status !== 502 && apiError.status !== 503) return;
    const queueClass = (reply.getHeader('x-svc-queue-class') as QueueClass | undefined) ?? defaultClass;
    reply.headers(upstreamUnavailableHeaders({ queueClass, backpressure: (request as WithBackpressure)[BACKPRESSURE] ?? 'normal', retryAfterSeconds: apiError.retryAfterSeconds }));
  });
}

/**
 * The request's route plan, made before anything about the request is checked so that its
 * limiter take names its queue class; undefined for a request that will be refused (bad body,
 * bad header, unknown model), which takes from the default class's bucket and is refused in
 * order later. The plan step uses it rather than planning again.
 */
function earlyPlan(routes: RouteConfig, request: FastifyRequest): RoutePlan | undefined {
  const rawBody = rawBodyOf(request);
  const model = typeof rawBody === 'object' && rawBody !== null && Object.hasOwn(rawBody, 'model') ? (rawBody as { model: unknown }).model : undefined;
  if (typeof model !== 'string') return undefined;
  try {
    const headers = parseRouteHeaders(request.headers);
    return planRoute(routes, { model, policy: headers.policy, privacyTier: headers.privacyTier, plan: request.hostedIdentity!.account.plan });
  } catch {
    return undefined;
  }
}

/**
 * The first step: every request that reaches the route takes from the limiter before anything
 * else. Refusals (402, 400, 409, 422) and idempotent replays cost a take like any answer, so
 * none of them is a way around the limits. Returns the plan made for the take, if one was.
 */
export async function takeChatLimit(request: FastifyRequest, reply: FastifyReply, limits: ChatLimits): Promise<RoutePlan | undefined> {
  if (limits.limiter === undefined) {
    reply.header('x-svc-backpressure-state', 'normal');
    return undefined;
  }
  const identity = request.hostedIdentity!;
  const planned = earlyPlan(limits.routes, request);
  const queueClass = planned?.queueClass ?? limits.defaultClass;
  reply.header('x-svc-queue-class', queueClass);
  const decision = await limits.limiter.take({ keyId: identity.key.id, accountId: identity.account.id, queueClass });
  if (!decision.allowed) throw new RateLimitedError(decision);
  (request as WithBackpressure)[BACKPRESSURE] = decision.backpressure;
  reply.headers(rateLimitHeaders(decision));
  return planned;
}
