import type { Plan } from '../../accounts/plan.ts';
import {
  POLICIES, PRIVACY_TIERS,
  type BackendConfig, type Policy, type PrivacyTier, type RouteConfig,
} from '../route-config.ts';
import type { QueueClass } from '../../accounts/limits/queue-classes.ts';
import { quoteInput } from '../../shared/quote-input.ts';
import { RouteRefusedError } from './route-refused-error.ts';
import type { NodeAttempt } from '../nodes/node-pool.ts';

/**
 * Without `x-svc-privacy-tier` a request is `personal`: the caller has not said its content may
 * go to a pooled backend, so it does not. Opting in (`mesh_safe`) widens the candidates.
 */
export const DEFAULT_PRIVACY_TIER: PrivacyTier = 'personal';

export interface RouteRequest {
  /** The hosted model id from the request body. */
  model: string;
  /** `x-svc-execution-policy`; undefined → the configuration's default_policy. */
  policy?: string | undefined;
  /** `x-svc-privacy-tier`; undefined → DEFAULT_PRIVACY_TIER. */
  privacyTier?: string | undefined;
  plan: Pick<Plan, 'enterprise'>;
}

export interface Candidate {
  backend: BackendConfig;
  /** The backend's own id for the hosted model (or ENGINE_DEFAULT_MODEL). */
  backendModel: string;
  /** For one node of a `nodes` backend (the executor expands the backend into its live nodes). */
  node?: NodeAttempt | undefined;
}

export interface RoutePlan {
  policy: Policy;
  queueClass: QueueClass;
  privacyTier: PrivacyTier;
  model: string;
  /** In the order to try them. */
  candidates: Candidate[];
}

const POLICY_SET: ReadonlySet<string> = new Set(POLICIES);
const PRIVACY_SET: ReadonlySet<string> = new Set(PRIVACY_TIERS);

function isPolicy(value: string): value is Policy {
  return POLICY_SET.has(value);
}

function isPrivacyTier(value: string): value is PrivacyTier {
  return PRIVACY_SET.has(value);
}

/**
 * Which backends may serve a request, in order, and in which queue class; or a typed refusal.
 * Checks run from the cheapest for the caller to fix to the most specific: the header values,
 * the model, the plan, then which backends the model and privacy tier leave.
 */
export function planRoute(config: RouteConfig, request: RouteRequest): RoutePlan {
  const policyText = request.policy ?? config.default_policy;
  if (!isPolicy(policyText)) {
    throw new RouteRefusedError('unknown_execution_policy', `x-svc-execution-policy ${quoteInput(policyText)} is not a policy; use one of ${POLICIES.join(', ')}.`, 'x-svc-execution-policy');
  }
  const route = config.routes.find((r) => r.policy === policyText);
  if (route === undefined) {
    const offered = config.routes.map((r) => r.policy).join(', ');
    throw new RouteRefusedError('unknown_execution_policy', `The execution policy '${policyText}' is not offered here; offered: ${offered}.`, 'x-svc-execution-policy');
  }
  const tierText = request.privacyTier ?? DEFAULT_PRIVACY_TIER;
  if (!isPrivacyTier(tierText)) {
    throw new RouteRefusedError('unknown_privacy_tier', `x-svc-privacy-tier ${quoteInput(tierText)} is not a privacy tier; use one of ${PRIVACY_TIERS.join(', ')}.`, 'x-svc-privacy-tier');
  }
  if (!config.models.some((m) => m.id === request.model)) {
    throw new RouteRefusedError('model_not_found', `The hosted model ${quoteInput(request.model)} does not exist; available: ${config.models.map((m) => m.id).join(', ')}.`, 'model');
  }
  if (route.enterprise_only && !request.plan.enterprise) {
    throw new RouteRefusedError('enterprise_plan_required', `The execution policy '${route.policy}' needs an enterprise plan.`, 'x-svc-execution-policy');
  }
  const backends = new Map(config.backends.map((b) => [b.id, b]));
  const serving: Candidate[] = [];
  for (const id of route.backends) {
    const backend = backends.get(id);
    if (backend === undefined || !Object.hasOwn(backend.models, request.model)) continue;
    serving.push({ backend, backendModel: backend.models[request.model]! });
  }
  if (serving.length === 0) {
    throw new RouteRefusedError('model_not_on_policy', `The hosted model ${quoteInput(request.model)} is not served under the policy '${route.policy}'.`, 'model');
  }
  const candidates = tierText === 'personal' ? serving.filter((c) => c.backend.sharing === 'dedicated') : serving;
  if (candidates.length === 0) {
    throw new RouteRefusedError(
      'no_backend_for_privacy_tier',
      `No backend for '${request.model}' under '${route.policy}' accepts privacy tier 'personal' (all are shared or mesh); send x-svc-privacy-tier: mesh_safe if the content may be pooled.`,
      'x-svc-privacy-tier',
    );
  }
  return { policy: route.policy, queueClass: route.queue_class, privacyTier: tierText, model: request.model, candidates };
}
