import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { HostedStore } from '../accounts/hosted-store.ts';
import type { RateLimiter } from '../accounts/limits/rate-limiter.ts';
import type { RouteConfig } from './route-config.ts';

/**
 * What a hosted plugin (chat, usage, keys — written elsewhere) is handed when it is mounted.
 * `Store` is the part of the store the plugin uses (KeyStore, LedgerStore, …): a plugin that
 * names less still mounts where the whole store is handed on.
 */
export interface HostedContext<Store = HostedStore> {
  store: Store;
  routes: RouteConfig;
  /**
   * The key check for this mount (in fleet mode, `/v1`, it also demands an enterprise plan),
   * then one take from the backstop limiter for the key (interactive class): every
   * key-protected route is limited right after authentication, before it costs a query.
   */
  requireKey: preHandlerAsyncHookHandler;
  /** The key check alone, for a route that takes from the limiter itself (chat, with its planned queue class). */
  authenticateKey: preHandlerAsyncHookHandler;
  /** Origins a signed-in browser request may come from (empty: the request's own Host). */
  publicOrigins: readonly string[];
  /** True in the enterprise fleet mount (`/v1`), false under `/api/v1`. */
  fleet: boolean;
  /** The backstop limiter `requireKey` takes from, for a route that admits callers another way (a session). */
  limiter?: RateLimiter | undefined;
}

export type HostedPlugin<Store = HostedStore> = (scope: FastifyInstance, context: HostedContext<Store>) => Promise<void>;
