import type { Logger } from 'pino';
import { OffThread } from '../shared/off-thread.ts';
import { readBuildInfo } from './build-info.ts';
import { buildHostedApp } from './hosted-app.ts';
import type { ReleaseSettings } from './release-record.ts';
import { evidencePlugin } from './chat/evidence-route.ts';
import { hostedChatPlugin } from './chat/hosted-chat-route.ts';
import { usagePlugin } from './chat/usage-route.ts';
import { loadRouteConfig } from './routing/load-route-config.ts';
import { RouteExecutor } from './routing/route-executor.ts';
import { openRateLimiter } from './limits/open-rate-limiter.ts';
import { openHostedStore } from './store/open-hosted-store.ts';

/** `svc hosted`'s settings after flags, environment and defaults are merged. */
export interface HostedServerConfig {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  routesFile: string | undefined;
  enterprise: boolean;
  corsOrigins: string[];
  /** The session cookie is Secure even on plain-HTTP requests (TLS ends at a proxy in front). */
  secureCookies?: boolean;
  bodyLimit: number;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  release: ReleaseSettings;
}

export interface HostedServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the store, loads the route configuration, builds the app and listens. Shutdown drains
 * like `svc serve`: no new requests (503 on kept-alive sockets), in-flight ones finish within
 * the grace period, then the store closes.
 */
export async function startHostedServer(config: HostedServerConfig, log: Logger): Promise<HostedServer> {
  const routes = loadRouteConfig(config.routesFile);
  const store = await openHostedStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const offThread = new OffThread();
  const draining = new AbortController();
  // No engine models are loaded by `svc hosted` yet: `engine` backends fail over to the next one.
  const executor = new RouteExecutor();
  // Shared by every replica through Redis when --redis-url is set; this process's own buckets otherwise.
  // The numbers come from the route configuration's `limits` table (defaults where absent).
  const limiter = await openRateLimiter({ redisUrl: config.redisUrl, limits: routes.limits, log });
  let app;
  try {
    app = await buildHostedApp({
      store, routes, offThread, logger: log, drainingSignal: draining.signal,
      enterprise: config.enterprise, corsOrigins: config.corsOrigins, bodyLimit: config.bodyLimit, secureCookies: config.secureCookies,
      requestTimeoutMs: config.requestTimeoutMs, build: readBuildInfo(), release: config.release,
      v1Plugins: [hostedChatPlugin({ executor, limiter }), evidencePlugin(), usagePlugin()],
    });
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await Promise.all([store.close(), offThread.close(), app?.close(), executor.close(), limiter.close()]);
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  log.info({ addresses: [url], store: store.kind, enterprise: config.enterprise, routes: config.routesFile ?? 'embedded default' }, `svc hosted listening on ${url}`);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      log.info({ graceMs: config.shutdownGraceMs }, 'shutting down: no new requests, finishing in-flight ones');
      draining.abort();
      const grace = setTimeout(() => {
        log.warn('grace period over: closing connections');
        app.server.closeAllConnections();
      }, Number.isFinite(config.shutdownGraceMs) ? config.shutdownGraceMs : 2 ** 31 - 1);
      grace.unref();
      await app.close();
      clearTimeout(grace);
      await Promise.all([store.close(), offThread.close(), executor.close(), limiter.close()]);
      log.info('stopped');
    })();
    return closing;
  };
  return { url, close };
}
