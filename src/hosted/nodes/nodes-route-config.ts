import type { RouteConfig } from '../route-config.ts';
import { NODE_DEFAULT_MODEL } from './node-pool.ts';

/** The backend id the embedded configuration gives registered nodes. */
export const NODES_BACKEND_ID = 'nodes';

/**
 * The embedded route configuration when the gateway takes nodes (`--node-token-hash`) and no
 * `--routes` file says otherwise: the public policies try the registered nodes first (least loaded),
 * then the in-process engine. Nodes run on the operator's own machines, so they are `dedicated`
 * like the engine. A routes file places a `kind = "nodes"` backend wherever it likes instead.
 */
export function withNodesBackend(config: RouteConfig): RouteConfig {
  const engine = config.backends.find((b) => b.id === 'engine');
  if (engine === undefined || config.backends.some((b) => b.id === NODES_BACKEND_ID)) return config;
  const models = Object.fromEntries(Object.keys(engine.models).map((hosted) => [hosted, NODE_DEFAULT_MODEL]));
  return {
    ...config,
    backends: [{ ...engine, id: NODES_BACKEND_ID, kind: 'nodes', models, provider: 'svc-node' }, ...config.backends],
    routes: config.routes.map((r) => (r.backends.includes('engine') ? { ...r, backends: [NODES_BACKEND_ID, ...r.backends] } : r)),
  };
}
