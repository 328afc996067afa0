import type { RouteConfig } from '../route-config.ts';

/** Stub until part R's loader lands at merge (the file or the embedded default). */
export function loadRouteConfig(_path?: string): RouteConfig {
  throw new Error('route config: not yet');
}
