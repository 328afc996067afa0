import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createHttpServer } from '../http/http-server.ts';
import { installCharsetGuard } from '../http/charset-guard.ts';
import { installDraining } from '../http/draining.ts';
import { installHttpOptions } from '../http/http-options.ts';
import { installJsonBodyParser } from '../http/json-body-parser.ts';
import { OPENAI_BODY_INTAKE } from '../openai/openai-intake.ts';
import { installRequestLog } from '../http/request-log.ts';
import { OffThread } from '../shared/off-thread.ts';
import type { BuildInfo } from './build-info.ts';
import type { HostedContext, HostedPlugin } from './hosted-plugin.ts';
import { installCorsGuard, corsOptions } from './hosted-cors.ts';
import { capacityDescriptor, evidenceDescriptor, healthDescriptor, modelsDescriptor, ragStatusDescriptor, routesDescriptor } from './descriptors.ts';
import { HOSTED_DOCS_PATH, hostedErrorBody, installHostedErrorHandler, sendHostedError, toHostedError } from './hosted-error.ts';
import { renderHostedDocs } from './hosted-docs.ts';
import type { HostedStore } from '../accounts/hosted-store.ts';
import { ragJobsContract, submitRagJob } from './rag-jobs.ts';
import { requireKey } from './require-key.ts';
import type { RateLimiter } from '../accounts/limits/rate-limiter.ts';
import type { RouteConfig } from './route-config.ts';
import { releaseRecord, type ReleaseSettings } from './release-record.ts';
import { keyRoutes } from './keys/key-routes.ts';
import { accountPages } from './pages/account-pages.ts';
import { sessionRoutes } from './sessions/session-routes.ts';
import { plainTransportHealth, type TransportSecurity } from '../transport/transport-security.ts';
import { HOSTED_CONSOLE_PREFIX, hostedConsoleRoutes } from '../console/console-routes.ts';

export interface HostedAppOptions {
  store: HostedStore;
  routes: RouteConfig;
  /** Enterprise fleet mode: the model API is mounted at `/v1` too, for enterprise keys. */
  enterprise?: boolean;
  /** Browser origins allowed to call the API (`*` for any); none by default. */
  corsOrigins?: readonly string[];
  /** Largest request body, bytes (default 8 MiB). */
  bodyLimit?: number;
  /** Time allowed to receive a whole request, ms (default 30 s). */
  requestTimeoutMs?: number;
  /** Aborted when shutdown begins: new requests get 503. */
  drainingSignal?: AbortSignal;
  /** A pino logger; none means silent. */
  logger?: FastifyBaseLogger | undefined;
  /** Where large bodies are parsed; one is made (and closed with the app) if not given. */
  offThread?: OffThread;
  build: BuildInfo;
  release?: ReleaseSettings;
  /** Plugins mounted beside the descriptors under `/api/v1` (and `/v1` in fleet mode). */
  v1Plugins?: HostedPlugin[];
  /** Plugins mounted under `/api` only, after the built-in sign-in and key routes. */
  apiPlugins?: HostedPlugin[];
  /** `/capacity`'s `solve_jobs` entry: the solve-job queue, its counts and live workers. */
  solveJobsCapacity?: () => Promise<Record<string, unknown>>;
  /** The session cookie is Secure even on plain-HTTP requests (TLS ends at a proxy in front). */
  secureCookies?: boolean;
  /** How long a session lasts from sign-in (default 7 days). */
  sessionTtlMs?: number;
  /** Where browsers reach this server, when a proxy in front rewrites Host (the CSRF origin check). */
  publicOrigins?: readonly string[];
  /** The backstop limiter (limits/): key-protected routes take from it; none means unlimited (tests). */
  limiter?: RateLimiter | undefined;
  /** `--pqc-transport`: HTTPS with post-quantum key exchange, the identity route, signed responses with ML-DSA. */
  transport?: TransportSecurity | undefined;
}

function contextFor(options: HostedAppOptions, fleet: boolean): HostedContext {
  return {
    store: options.store, routes: options.routes, fleet, publicOrigins: options.publicOrigins ?? [], limiter: options.limiter,
    requireKey: requireKey(options.store, { enterprise: fleet, limiter: options.limiter }),
    authenticateKey: requireKey(options.store, { enterprise: fleet }),
  };
}

export const DEFAULT_HOSTED_BODY_LIMIT = 8 * 1024 * 1024;

/** The model API: descriptors, retrieval jobs, and whatever `v1Plugins` add (chat, usage). */
function v1Routes(options: HostedAppOptions, fleet: boolean) {
  return async (v1: FastifyInstance): Promise<void> => {
    const context = contextFor(options, fleet);
    const noStore = { 'cache-control': 'no-store' };
    // The transport fields are read from the connection the request came on.
    v1.get('/health', async (request, reply) => reply.headers(noStore).send({ ...healthDescriptor(), ...(options.transport?.health(request.raw.socket) ?? plainTransportHealth()) }));
    v1.get('/models', async () => modelsDescriptor(options.routes));
    v1.get('/routes', async () => routesDescriptor(options.routes));
    v1.get('/evidence', async () => evidenceDescriptor());
    // The contract's fields unchanged; `solve_jobs` (the job queue and its live workers) added when jobs are mounted.
    v1.get('/capacity', async () => ({ ...capacityDescriptor(options.routes), ...(options.solveJobsCapacity === undefined ? {} : { solve_jobs: await options.solveJobsCapacity() }) }));
    v1.get('/rag/status', async () => ragStatusDescriptor());
    v1.get('/rag/jobs', async () => ragJobsContract());
    v1.post('/rag/jobs', { preHandler: context.requireKey }, async (request) => submitRagJob(request.body, request.hostedIdentity!.account.id));
    for (const plugin of options.v1Plugins ?? []) await v1.register(async (scope) => plugin(scope, context));
  };
}

/**
 * The hosted tier as one Fastify app (this file builds it; hosted-server.ts listens). The model
 * API is one plugin, mounted at `/api/v1` and, in fleet mode, again at `/v1`; key checks are
 * per-route preHandlers inside it, so nothing outside (docs, version, the local daemon's
 * routes, which live in another app altogether) is ever asked for a key.
 */
export async function buildHostedApp(options: HostedAppOptions): Promise<FastifyInstance> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const app = Fastify({
    ...(options.logger !== undefined ? { loggerInstance: options.logger } : { logger: false }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? DEFAULT_HOSTED_BODY_LIMIT,
    serverFactory: (handler) => createHttpServer(requestTimeoutMs, handler, hostedErrorBody, options.transport),
    clientErrorHandler: () => {},
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: (error, _request, reply) => sendHostedError(reply, toHostedError(error)),
  });
  const offThread = options.offThread ?? new OffThread();
  if (options.offThread === undefined) app.addHook('onClose', async () => offThread.close());
  installHostedErrorHandler(app);
  // JSON only: Fastify's text/plain parser would let a mistyped body reach a route.
  app.removeAllContentTypeParsers();
  installJsonBodyParser(app, offThread, OPENAI_BODY_INTAKE);
  installRequestLog(app);
  app.decorateRequest('hostedIdentity', undefined);
  installDraining(app, options.drainingSignal ?? new AbortController().signal);
  options.transport?.install(app);
  installCharsetGuard(app);
  installHttpOptions(app);
  const origins = options.corsOrigins ?? [];
  installCorsGuard(app, origins);
  await app.register(cors, corsOptions(origins));

  const docs = renderHostedDocs();
  app.get(HOSTED_DOCS_PATH, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(docs));

  await app.register(accountPages);
  // The usage page (the console's hosted page), reading /api/v1/usage with the session cookie.
  await app.register(hostedConsoleRoutes, { prefix: HOSTED_CONSOLE_PREFIX });
  await app.register(async (api) => {
    api.get('/version', async (_request, reply) => reply.header('cache-control', 'no-store').send(releaseRecord(options.build, options.release ?? {}, options.enterprise === true)));
    await api.register(v1Routes(options, false), { prefix: '/v1' });
    const context = contextFor(options, false);
    const apiPlugins = [sessionRoutes({ secureCookies: options.secureCookies, sessionTtlMs: options.sessionTtlMs }), keyRoutes, ...(options.apiPlugins ?? [])];
    for (const plugin of apiPlugins) await api.register(async (scope) => plugin(scope, context));
  }, { prefix: '/api' });
  if (options.enterprise === true) await app.register(v1Routes(options, true), { prefix: '/v1' });
  return app;
}
