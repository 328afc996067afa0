import { limitsConfigSchema } from '../accounts/limits/limits-config.ts';
import { POLICIES, PRIVACY_TIERS, type RouteConfig } from './route-config.ts';
import { QUEUE_CLASSES, type QueueClass } from '../accounts/limits/queue-classes.ts';

/**
 * The contract descriptors (`/api/v1/models`, `/routes`, `/evidence`, `/capacity`,
 * `/rag/status`), built from the live route configuration and the contract's own words. Each
 * says what it does not claim, as the contract lists it. No HTTP here.
 */

/** The route-control request headers, as the CORS allow-list and `/evidence` name them. */
export const ROUTE_HEADERS = ['x-svc-execution-policy', 'x-svc-privacy-tier', 'x-svc-project-id', 'x-svc-max-joules', 'x-svc-max-latency-ms'] as const;

export function healthDescriptor(): Record<string, unknown> {
  return {
    status: 'ok',
    scope: 'hosted_reachability',
    not_claimed: ["This reports that the hosted service answered. It does not prove that a developer's local runtime is healthy."],
  };
}

/** Hosted model id → the policies whose backends serve it. */
function policiesByModel(config: RouteConfig): Map<string, string[]> {
  const backends = new Map(config.backends.map((b) => [b.id, b]));
  const result = new Map<string, string[]>();
  for (const route of config.routes) {
    for (const backendId of route.backends) {
      const backend = backends.get(backendId);
      if (backend === undefined) continue;
      for (const model of Object.keys(backend.models)) {
        const list = result.get(model) ?? [];
        if (!list.includes(route.policy)) list.push(route.policy);
        result.set(model, list);
      }
    }
  }
  return result;
}

export function modelsDescriptor(config: RouteConfig): Record<string, unknown> {
  const policies = policiesByModel(config);
  const families = [...new Set(config.models.map((m) => m.family))];
  return {
    object: 'list',
    data: config.models.map((m) => ({
      id: m.id,
      object: 'model',
      owned_by: 'svc',
      family: m.family,
      ...(m.description !== undefined ? { description: m.description } : {}),
      policies: policies.get(m.id) ?? [],
    })),
    route_families: families,
    not_claimed: ['This lists hosted models and route families, not every underlying weight file.'],
  };
}

export function routesDescriptor(config: RouteConfig): Record<string, unknown> {
  const backends = new Map(config.backends.map((b) => [b.id, b]));
  return {
    default_policy: config.default_policy,
    routes: config.routes.map((route) => ({
      policy: route.policy,
      queue_class: route.queue_class,
      enterprise_only: route.enterprise_only,
      fallback: 'the next backend, in order, on failure or a latency-ceiling breach',
      // Upstream addresses and backend-side model ids stay private: they name internal hosts.
      backends: route.backends.flatMap((id) => {
        const b = backends.get(id);
        return b === undefined ? [] : [{
          id: b.id,
          kind: b.kind,
          provider: b.provider,
          execution_plane: b.execution_plane,
          sharing: b.sharing,
          models: Object.keys(b.models),
          energy_profile: b.energy,
        }];
      }),
    })),
  };
}

/** The twelve `svc_route` fields, with types and units (the contract leaves them to us). */
export const SVC_ROUTE_FIELDS = [
  { name: 'execution_plane', type: 'string', unit: null, description: 'Where it ran: supercomputer, enterprise or enterprise-byo.' },
  { name: 'policy', type: 'string', unit: null, description: 'The execution policy applied.' },
  { name: 'privacy_tier', type: 'string', unit: null, description: 'mesh_safe or personal.' },
  { name: 'model', type: 'string', unit: null, description: 'The hosted model id that answered.' },
  { name: 'provider', type: 'string', unit: null, description: 'The backend provider that answered.' },
  { name: 'latency_ms', type: 'integer', unit: 'milliseconds', description: 'Wall time from the request reaching the route to its last byte.' },
  { name: 'raw_joules', type: 'number | null', unit: 'joules', description: 'Measured energy, where the backend reports it or the host exposes counters; null otherwise, never estimated.' },
  { name: 'estimated_joules', type: 'number', unit: 'joules', description: "Energy from the backend's energy profile (per prompt token, per completion token, per second)." },
  { name: 'billable_joules', type: 'number', unit: 'joules', description: 'What the ledger charges for this request.' },
  { name: 'fallback', type: 'boolean', unit: null, description: 'Whether a backend other than the first of the policy answered.' },
  { name: 'fallback_reason', type: 'string | null', unit: null, description: 'Why the route fell back; null when it did not.' },
  { name: 'key_id', type: 'string', unit: null, description: 'The id of the API key the request was made with (never its secret); covered by the signature.' },
  { name: 'evidence_id', type: 'string', unit: null, description: 'Unique id of this evidence, retrievable by the same account.' },
] as const;

/** The fields a signed `svc_route` adds (--pqc-transport with an ML-DSA identity; src/transport/evidence-signature.ts). */
export const SVC_ROUTE_SIGNATURE_FIELDS = [
  { name: 'signature_alg', type: 'string (optional)', unit: null, description: 'With --pqc-transport …,ml-dsa-65: the ML-DSA parameter set that signed this record.' },
  { name: 'signing_key_id', type: 'string (optional)', unit: null, description: 'base64url SHA-256 of the signing public key (GET /transport/identity publishes it).' },
  { name: 'signature', type: 'string (optional)', unit: null, description: "base64url ML-DSA signature (context 'svc_route/v1') over the record's RFC 8785 JSON without this field; `svc evidence verify` checks it offline." },
] as const;

export function evidenceDescriptor(): Record<string, unknown> {
  return {
    svc_route: {
      where: 'The svc_route object of a hosted chat completion response; on a streamed reply, on the final chunk.',
      fields: SVC_ROUTE_FIELDS,
      // Present only when the server signs evidence; the public key is at GET /transport/identity.
      signature_fields: SVC_ROUTE_SIGNATURE_FIELDS,
    },
    request_headers: [
      { name: 'x-svc-execution-policy', type: 'string', values: [...POLICIES], description: 'Execution policy; default the configured default policy.' },
      { name: 'x-svc-privacy-tier', type: 'string', values: [...PRIVACY_TIERS], description: 'personal never routes to a shared or mesh backend.' },
      { name: 'x-svc-project-id', type: 'string', values: null, description: 'Project attribution for usage.' },
      { name: 'x-svc-max-joules', type: 'integer', unit: 'joules', values: null, description: 'Joules ceiling for the request.' },
      { name: 'x-svc-max-latency-ms', type: 'integer', unit: 'milliseconds', values: null, description: 'Latency ceiling for the request.' },
    ],
    not_claimed: ['Joules and route evidence prove paid compute use only; they do not prove that the shared pool owns or indexes a private corpus.'],
  };
}

const QUEUE_CLASS_POLICY: Record<QueueClass, string> = {
  interactive: 'Short chat turns; the backstop limiter answers 429 rate_limit_error with Retry-After when it trips.',
  deep: 'Longer, heavier requests; the same backstop limiter, with its own budget.',
  enterprise: 'Enterprise-private and enterprise-BYO traffic; enterprise keys only.',
};

export function capacityDescriptor(config: RouteConfig): Record<string, unknown> {
  return {
    queue_classes: QUEUE_CLASSES.map((queueClass) => ({
      name: queueClass,
      policies: config.routes.filter((r) => r.queue_class === queueClass).map((r) => r.policy),
      policy: QUEUE_CLASS_POLICY[queueClass],
    })),
    backpressure: {
      rate_limited: { status: 429, type: 'rate_limit_error', body_field: 'retry_after_seconds' },
      upstream_unavailable: { status: 503, type: 'server_error' },
      headers: ['Retry-After', 'x-svc-queue-class', 'x-svc-backpressure-state'],
      // The configured backstop numbers (requests per second and burst), per key and per queue class.
      limits: limitsConfigSchema.parse(config.limits ?? {}),
    },
    live_queue_depth: null,
    not_claimed: ['live queue depth', 'async hosted job queueing', 'reserved public capacity', 'million-user readiness'],
  };
}

export function ragStatusDescriptor(): Record<string, unknown> {
  return {
    // The hosted service has no retrieval bridge of its own: it says so rather than report a
    // clean zero (the contract's retrieval_unavailable rule).
    reachability: {
      bridge_health: 'not_configured',
      memory_search: 'not_configured',
      unified_search: 'not_configured',
    },
    modes: {
      launch_default: ['local knowledge spaces on the developer runtime (/api/spaces)'],
      available_when_configured: ['local embeddings through the local runtime (/v1/embeddings)'],
      planned: ['account/private-boundary retrieval jobs (see GET /api/v1/rag/jobs)'],
    },
    embedding_strategy: {
      candidate: 'Local embeddings with a GGUF embedding model served by the local runtime; other model families only after evaluation on precision, latency, stale-memory rejection and answer support.',
    },
    rag_job_contract: '/api/v1/rag/jobs',
    not_claimed: [
      'hybrid dense+sparse retrieval',
      'reranking',
      'graph or community-summary RAG',
      'visual-document RAG',
      'cross-device RAG sync',
      'shared/global private-memory RAG',
    ],
  };
}
