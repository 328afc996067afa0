import { z } from 'zod';
import { upstreamTableSchema } from '../inference/upstream-config.ts';
import { limitsConfigSchema } from '../accounts/limits/limits-config.ts';
import { POLICIES } from './route-vocabulary.ts';
import { QUEUE_CLASSES } from '../accounts/limits/queue-classes.ts';

/**
 * The hosted tier's route configuration: which execution policies exist, the queue class each
 * one runs in, and the ordered backends that serve it, each with a model map and an energy
 * profile. Loaded from a file (`--routes`, TOML or JSON) or the embedded default below, so one
 * machine works out of the box. Descriptors (`/api/v1/routes`, `/capacity`, `/models`) are
 * built from the live configuration, never from a second copy. The policy and privacy-tier
 * strings are in route-vocabulary.ts, the queue classes in accounts/limits/queue-classes.ts.
 */
export { POLICIES, PRIVACY_TIERS, type Policy, type PrivacyTier } from './route-vocabulary.ts';

/** What a backend costs, from which `estimated_joules` is computed (measured Joules go in `raw_joules`). */
export const energyProfileSchema = z.strictObject({
  joules_per_prompt_token: z.number().nonnegative(),
  joules_per_completion_token: z.number().nonnegative(),
  /** Load while the request runs (wall time × this). */
  joules_per_second: z.number().nonnegative(),
});
export type EnergyProfile = z.infer<typeof energyProfileSchema>;

const idSchema = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'ids are 1 to 64 lower-case letters, digits, dots, dashes or underscores');

export const backendSchema = z.strictObject({
  id: idSchema,
  /**
   * `engine`: the in-process llama.cpp engine; `upstream`: an OpenAI-compatible URL; `nodes`: the
   * inference nodes registered with this gateway (`svc serve --join`), least loaded first
   * (docs/inference-nodes.md). A `nodes` backend's models map hosted ids to the nodes' own model
   * ids (`@default`: each node's first model).
   */
  kind: z.enum(['engine', 'upstream', 'nodes']),
  /** For `upstream`: where and how to reach it (the same table as the local daemon's `[[upstreams]]`, minus the name). */
  upstream: upstreamTableSchema.omit({ name: true }).optional(),
  /** `dedicated`: this account's traffic only; `shared` or `mesh`: pooled; `personal` privacy never goes there. */
  sharing: z.enum(['dedicated', 'shared', 'mesh']),
  /** Plane reported in `svc_route.execution_plane`. */
  execution_plane: z.enum(['supercomputer', 'enterprise', 'enterprise-byo']),
  /** Hosted model id → the backend's own model id. */
  models: z.record(z.string().min(1).max(256), z.string().min(1).max(512)),
  energy: energyProfileSchema,
  /** Provider name reported in `svc_route.provider`. */
  provider: z.string().min(1).max(128),
});
export type BackendConfig = z.infer<typeof backendSchema>;

export const policyRouteSchema = z.strictObject({
  policy: z.enum(POLICIES),
  queue_class: z.enum(QUEUE_CLASSES),
  /** Backend ids, tried in order: the next one on failure or a latency-ceiling breach. */
  backends: z.array(idSchema).min(1),
  /** Enterprise policies need an enterprise plan. */
  enterprise_only: z.boolean().default(false),
});
export type PolicyRoute = z.infer<typeof policyRouteSchema>;

export const hostedModelSchema = z.strictObject({
  id: z.string().min(1).max(256),
  /** Route family shown in descriptors (e.g. `chat`). */
  family: z.string().min(1).max(64),
  description: z.string().max(1000).optional(),
});

export const routeConfigSchema = z.strictObject({
  default_policy: z.enum(POLICIES),
  models: z.array(hostedModelSchema).min(1),
  backends: z.array(backendSchema).min(1),
  routes: z.array(policyRouteSchema).min(1),
  /** The backstop rate limiter's numbers (docs/hosted.md, "Rate limits"); absent parts take the defaults. */
  limits: limitsConfigSchema.optional(),
});
export type RouteConfig = z.infer<typeof routeConfigSchema>;
