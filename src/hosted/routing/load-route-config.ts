import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { UserError } from '../../shared/user-error.ts';
import { routeConfigSchema, type RouteConfig } from '../route-config.ts';

/**
 * The engine backend's stand-in for "whichever chat model this process serves": the default
 * configuration cannot know the operator's model ids, so the executor resolves this to the
 * first chat-capable model of the engine's registry at request time.
 */
export const ENGINE_DEFAULT_MODEL = '@default';

/** Hosted model id of the embedded default configuration. */
export const DEFAULT_HOSTED_MODEL = 'svc-chat';

export class RouteConfigError extends UserError {
  override name = 'RouteConfigError';

  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/**
 * The embedded default: one machine works out of the box. The in-process llama.cpp engine
 * serves `svc-chat` for both public policies; the enterprise policies exist (so descriptors
 * show them) but need an enterprise plan.
 *
 * Energy profile (an estimate, never presented as measured; see docs/hosted.md, "Routing and
 * Joules"): a CPU inference box draws about 6 W per busy core above idle; two threads → 12 W.
 * A ~1B-parameter Q4 model on two cores of this class decodes about 20 tokens/s, so one
 * completion token costs 12 W / 20 tok/s = 0.6 J; prompt processing is batched and runs about
 * 10× faster, so 0.06 J per prompt token; memory and uncore held while a request runs add
 * about 2 W, charged as 2 J per second of wall time.
 */
export function defaultRouteConfig(): RouteConfig {
  const energy = { joules_per_prompt_token: 0.06, joules_per_completion_token: 0.6, joules_per_second: 2 };
  return routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: DEFAULT_HOSTED_MODEL, family: 'chat', description: 'The chat model this hosted process serves with its in-process llama.cpp engine.' }],
    backends: [
      {
        id: 'engine',
        kind: 'engine',
        // The engine runs inside the hosted process on the operator's own machine: nothing is
        // pooled with a third party or a mesh, so `personal` traffic may use it.
        sharing: 'dedicated',
        execution_plane: 'supercomputer',
        models: { [DEFAULT_HOSTED_MODEL]: ENGINE_DEFAULT_MODEL },
        energy,
        provider: 'svc-llama.cpp',
      },
      {
        id: 'enterprise-engine',
        kind: 'engine',
        sharing: 'dedicated',
        execution_plane: 'enterprise',
        models: { [DEFAULT_HOSTED_MODEL]: ENGINE_DEFAULT_MODEL },
        energy,
        provider: 'svc-llama.cpp',
      },
    ],
    routes: [
      { policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['engine'] },
      { policy: 'supercomputer-deep', queue_class: 'deep', backends: ['engine'] },
      { policy: 'enterprise-private', queue_class: 'enterprise', backends: ['enterprise-engine'], enterprise_only: true },
      // BYO needs the customer's own provider (an `upstream` backend); until one is configured
      // it runs on the enterprise engine, which is the closest honest stand-in.
      { policy: 'enterprise-byo', queue_class: 'enterprise', backends: ['enterprise-engine'], enterprise_only: true },
    ],
  });
}

function parseFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RouteConfigError(`Route config ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  const json = extname(path).toLowerCase() === '.json';
  try {
    return json ? JSON.parse(text) : parseToml(text);
  } catch (error) {
    const first = String((error as Error).message).split('\n')[0];
    throw new RouteConfigError(`Route config ${path}: not valid ${json ? 'JSON' : 'TOML'}: ${first}`);
  }
}

/** The cross-checks the schema cannot express; each a one-line message naming what is wrong. */
export function checkRouteConfig(config: RouteConfig, where = 'Route config'): RouteConfig {
  const backends = new Map<string, RouteConfig['backends'][number]>();
  for (const backend of config.backends) {
    if (backends.has(backend.id)) throw new RouteConfigError(`${where}: two backends have the id '${backend.id}'.`);
    backends.set(backend.id, backend);
    if (backend.kind === 'upstream' && backend.upstream === undefined) {
      throw new RouteConfigError(`${where}: backend '${backend.id}' is kind = "upstream" but has no [backends.upstream] table (base_url, api_key_env, …).`);
    }
    if (backend.kind !== 'upstream' && backend.upstream !== undefined) {
      throw new RouteConfigError(`${where}: backend '${backend.id}' is kind = "${backend.kind}" but has an upstream table; make it kind = "upstream" or remove the table.`);
    }
  }
  const models = new Set<string>();
  for (const model of config.models) {
    if (models.has(model.id)) throw new RouteConfigError(`${where}: the hosted model '${model.id}' is listed twice.`);
    models.add(model.id);
  }
  const policies = new Set<string>();
  for (const route of config.routes) {
    if (policies.has(route.policy)) throw new RouteConfigError(`${where}: two routes are given for the policy '${route.policy}'.`);
    policies.add(route.policy);
    if (route.policy.startsWith('enterprise-') && !route.enterprise_only) {
      throw new RouteConfigError(`${where}: the route for '${route.policy}' must set enterprise_only = true (enterprise policies need an enterprise plan).`);
    }
    if (route.queue_class === 'enterprise' && !route.enterprise_only) {
      throw new RouteConfigError(`${where}: the route for '${route.policy}' uses the enterprise queue class but is not enterprise_only.`);
    }
    const seen = new Set<string>();
    for (const id of route.backends) {
      if (!backends.has(id)) throw new RouteConfigError(`${where}: the route for '${route.policy}' names the backend '${id}', which is not defined.`);
      if (seen.has(id)) throw new RouteConfigError(`${where}: the route for '${route.policy}' lists the backend '${id}' twice.`);
      seen.add(id);
    }
  }
  if (!policies.has(config.default_policy)) {
    throw new RouteConfigError(`${where}: default_policy '${config.default_policy}' has no route.`);
  }
  for (const backend of config.backends) {
    for (const hosted of Object.keys(backend.models)) {
      if (!models.has(hosted)) throw new RouteConfigError(`${where}: backend '${backend.id}' maps '${hosted}', which is not a hosted model (add it to models).`);
    }
  }
  for (const model of config.models) {
    const served = config.routes.some((route) => route.backends.some((id) => Object.hasOwn(backends.get(id)?.models ?? {}, model.id)));
    if (!served) throw new RouteConfigError(`${where}: no backend on any route maps the hosted model '${model.id}'.`);
  }
  return config;
}

/**
 * The route configuration: the file at `path` (`.json` is JSON, anything else TOML) checked
 * with routeConfigSchema and the cross-checks above, or the embedded default without a path.
 * Synchronous: it runs once at start-up, before the server listens.
 */
export function loadRouteConfig(path?: string): RouteConfig {
  if (path === undefined) return checkRouteConfig(defaultRouteConfig(), 'Default route config');
  const where = `Route config ${path}`;
  const parsed = routeConfigSchema.safeParse(parseFile(path));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue !== undefined && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new RouteConfigError(`${where}${at}: ${issue?.message ?? 'invalid'}.`);
  }
  return checkRouteConfig(parsed.data, where);
}
