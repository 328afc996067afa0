import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteConfig } from '../route-config.ts';
import { promptTokenBound, reservationJoules } from '../routing/energy.ts';
import { RouteRefusedError } from '../routing/route-refused-error.ts';
import { planRoute, type RoutePlan } from '../routing/route-planner.ts';
import type { ChatIntake } from './chat-intake.ts';
import { allowanceExhausted } from './chat-errors.ts';

/** What the request will run on and the most it may cost. */
export interface ChatPlan {
  plan: RoutePlan;
  /** Sampling, tools and output shape for the executor. */
  sampling: ChatIntake['options'];
  /** x-svc-max-joules, or what the prompt bound, max_tokens and load can cost on the planned backends. */
  ceiling: number;
}

/**
 * The route plan (the one made for the limiter take, when it was made for this model), then what
 * can be refused with nothing reserved: a spent allowance, and x-svc-max-joules 0.
 */
export function planChat(routes: RouteConfig, request: FastifyRequest, reply: FastifyReply, intake: ChatIntake, planned: RoutePlan | undefined): ChatPlan {
  const identity = request.hostedIdentity!;
  const { headers, maxTokens } = intake;
  const plan = planned?.model === intake.model ? planned : planRoute(routes, { model: intake.model, policy: headers.policy, privacyTier: headers.privacyTier, plan: identity.account.plan });
  reply.header('x-svc-queue-class', plan.queueClass);

  // Read with the key, a moment ago: a spent allowance is refused without a reservation.
  if (identity.allowance.remainingJoules <= 0) throw allowanceExhausted(identity.allowance, 'it is used up');
  const sampling = intake.options;
  // x-svc-max-joules: 0 fits nothing, whatever the prompt: refused as the executor would, before a reservation.
  if (headers.maxJoules === 0) throw new RouteRefusedError('joule_ceiling_too_low', 'x-svc-max-joules 0 cannot cover any request: its prompt and one completion token cost more. Nothing was run.', 'x-svc-max-joules');
  const ceiling = headers.maxJoules ?? reservationJoules(plan.candidates.map((c) => c.backend.energy), promptTokenBound(intake.messages, sampling), maxTokens);
  return { plan, sampling, ceiling };
}
