import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import type { SpaceLibrary } from '../spaces/space-types.ts';
import { chatCompletionsRoute } from './chat-completions-route.ts';
import { comingSoonRoutes } from './coming-soon-routes.ts';
import { completionsRoute } from './completions-route.ts';
import { embeddingsRoute } from './embeddings-route.ts';
import { rerankRoute } from './rerank-route.ts';
import { installCharsetGuard } from '../http/charset-guard.ts';
import { createHttpServer } from '../http/http-server.ts';
import { installHttpOptions } from '../http/http-options.ts';
import { healthRoute, type HealthReporter } from './health-route.ts';
import { installEventLoopMonitor } from '../http/event-loop-monitor.ts';
import { installLoopbackGuard } from '../http/loopback-guard.ts';
import { installMemoryRelief } from '../http/memory-relief.ts';
import { modelsRoutes } from './models-routes.ts';
import { responsesRoute } from './responses-route.ts';
import { responsesCompactRoute } from './responses-compact-route.ts';
import { responsesSocketRoute } from './responses-socket-route.ts';
import { storedResponsesRoutes } from './stored-responses-routes.ts';
import type { ResponseStore } from '../openai/response-store.ts';
import { closeRefusedUpgrades } from '../http/refused-upgrades.ts';
import { messagesRoutes } from './messages-route.ts';
import { installOpenAIErrorHandler, sendApiError, toApiError } from '../http/openai-error-handler.ts';
import { installDraining } from '../http/draining.ts';
import { installJsonBodyParser } from '../http/json-body-parser.ts';
import { OPENAI_BODY_INTAKE } from '../openai/openai-intake.ts';
import type { OffThread } from '../shared/off-thread.ts';
import { installRequestLog } from '../http/request-log.ts';
import { installDeveloperKeyGuard, type DeveloperKeyGuardOptions } from './developer-key-guard.ts';
import type { TransportSecurity } from '../transport/transport-security.ts';
import type { JobLog } from '../shared/job-log.ts';
import { consoleRoutes } from '../console/console-routes.ts';
import { modelResidencyRoutes, type ModelResidency } from './model-residency-routes.ts';
import { modelLibraryRoutes, type ModelLibraryOptions } from './model-library-routes.ts';

export interface LocalAppOptions {
  models: ModelRegistry;
  /** Ids of the models in memory now (`state` in /v1/models). */
  loadedModels?: () => readonly string[];
  /** Bytes a loaded model holds (`memory_bytes` in /v1/models); null where not known. */
  memoryBytes?: (id: string) => number | null;
  health: HealthReporter;
  /** Loads and unloads models on request (`/api/models/load|unload`); absent, those routes are not there. */
  residency?: ModelResidency | undefined;
  /** Pulls and deletes models (`POST /v1/models/pull`, `DELETE /v1/models/{id}`); absent, those routes are not there. */
  modelLibrary?: Pick<ModelLibraryOptions, 'files' | 'dataDir' | 'hubEndpoint' | 'token'> | undefined;
  /** Aborted when shutdown begins: new requests (also on kept-alive sockets) get 503. */
  drainingSignal: AbortSignal;
  /** Aborted when the shutdown grace period ends: generations stop, streams end. */
  shutdownSignal: AbortSignal;
  /** Largest request body accepted on the OpenAI routes, in bytes. */
  bodyLimit: number;
  /** Time allowed to receive a whole request (slow clients are cut off), ms. */
  requestTimeoutMs: number;
  /** A pino logger; none means silent (tests that use inject). */
  logger?: FastifyBaseLogger | undefined;
  fingerprint: string;
  /** Where large bodies are parsed (json-body-parser.ts). */
  offThread: OffThread;
  /** Extra plugins (quantum solve, spaces) mounted under `/api`. */
  apiPlugins?: ((app: FastifyInstance) => Promise<void>)[];
  /** Extra plugins mounted at the root (the MCP server's `/mcp` and `/openai-tools`). */
  rootPlugins?: ((app: FastifyInstance) => Promise<void>)[];
  /** Where Responses with `store: true` are kept; absent, `/v1/responses` is stateless (store: true refused). */
  responses?: ResponseStore | undefined;
  /** Knowledge spaces, for chat requests that name `spaces`. */
  spaces?: SpaceLibrary | undefined;
  /** Developer keys (`--developer-keys`): identity, project and per-key limits; absent, no key is looked at. */
  developerKeys?: DeveloperKeyGuardOptions | undefined;
  /** `--pqc-transport`: HTTPS with post-quantum key exchange, response signatures with an ML-DSA identity. */
  transport?: TransportSecurity | undefined;
  /** Where requests to job routes (chat, completions, embeddings, solve) are recorded; none, nowhere. */
  jobLog?: JobLog | undefined;
}

/** What every listener of the daemon shares: its server settings, error envelope, guards and log. */
export type BaseAppOptions = Pick<LocalAppOptions, 'logger' | 'bodyLimit' | 'requestTimeoutMs' | 'drainingSignal' | 'developerKeys' | 'transport' | 'jobLog'>;

/**
 * A Fastify app with what every listener of the daemon needs before its routes: the error
 * envelope, the loopback guard, the request log, draining and developer keys.
 */
export function buildBaseApp(options: BaseAppOptions): FastifyInstance {
  const app = Fastify({
    ...(options.logger !== undefined ? { loggerInstance: options.logger } : { logger: false }),
    // Fastify's two lines per request are replaced by request-log.ts's one.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    serverFactory: (handler) => createHttpServer(options.requestTimeoutMs, handler, undefined, options.transport),
    // createHttpServer already answers client errors in the envelope on every server it makes;
    // Fastify's default handler would write a second, Fastify-shaped answer on this one.
    clientErrorHandler: () => {},
    // The draining hook answers requests during shutdown, in the envelope.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    // Errors Fastify raises before routing (a malformed URL) use the same envelope.
    frameworkErrors: (error, _request, reply) => sendApiError(reply, toApiError(error)),
  });
  installOpenAIErrorHandler(app);
  installLoopbackGuard(app);
  installRequestLog(app, options.jobLog);
  installDraining(app, options.drainingSignal);
  options.transport?.install(app);
  if (options.developerKeys !== undefined) {
    const guard = installDeveloperKeyGuard(app, options.developerKeys);
    app.addHook('onClose', async () => guard.close());
  }
  return app;
}

/** Browser apps served from a loopback origin may call the daemon (the guard has already refused every other origin), as Ollama allows for localhost by default. */
export async function allowLoopbackOrigins(app: FastifyInstance): Promise<void> {
  await app.register(cors, { origin: true, maxAge: 600 });
}

/** The guards every listener shares: charset, OPTIONS/405 answers, memory relief and loopback CORS. */
export async function installListenerGuards(app: FastifyInstance): Promise<void> {
  installCharsetGuard(app);
  installHttpOptions(app);
  installMemoryRelief(app);
  await allowLoopbackOrigins(app);
}

/**
 * Assembles the local face from plugins (after fastify/demo: this file builds the app,
 * app/daemon.ts listens). The loopback guard and the error envelope cover every route.
 */
export async function buildLocalApp(options: LocalAppOptions): Promise<FastifyInstance> {
  const app = buildBaseApp(options);
  installJsonBodyParser(app, options.offThread, OPENAI_BODY_INTAKE);
  await installListenerGuards(app);
  closeRefusedUpgrades(app);

  // Every request is seen in flight, so a stall's log line can name the ones that caused it.
  const eventLoop = installEventLoopMonitor(app);
  await app.register(healthRoute, { report: async (request) => ({ ...(await options.health(request)), event_loop: eventLoop.health() }) });
  const routeOptions = { models: options.models, shutdownSignal: options.shutdownSignal, fingerprint: options.fingerprint, spaces: options.spaces };
  await app.register(
    async (v1) => {
      await v1.register(modelsRoutes, { models: options.models, loadedModels: options.loadedModels, memoryBytes: options.memoryBytes });
      if (options.modelLibrary !== undefined) {
        await v1.register(modelLibraryRoutes, { ...options.modelLibrary, models: options.models, loadedModels: options.loadedModels, memoryBytes: options.memoryBytes, shutdownSignal: options.shutdownSignal });
      }
      await v1.register(chatCompletionsRoute, routeOptions);
      await v1.register(responsesRoute, { models: options.models, shutdownSignal: options.shutdownSignal, store: options.responses });
      await v1.register(storedResponsesRoutes, { store: options.responses });
      await v1.register(responsesCompactRoute, { models: options.models, shutdownSignal: options.shutdownSignal });
      await v1.register(responsesSocketRoute, { models: options.models, shutdownSignal: options.shutdownSignal, maxMessageBytes: options.bodyLimit, store: options.responses });
      // Anthropic's Messages API: its own error envelope, scoped to /v1/messages.
      await v1.register(messagesRoutes, { prefix: '/messages', models: options.models, shutdownSignal: options.shutdownSignal });
      await v1.register(completionsRoute, routeOptions);
      await v1.register(embeddingsRoute, { models: options.models });
      await v1.register(rerankRoute, { models: options.models });
      await v1.register(comingSoonRoutes);
    },
    { prefix: '/v1' },
  );
  if (options.residency !== undefined) await app.register(modelResidencyRoutes, { prefix: '/api', models: options.models, residency: options.residency });
  for (const plugin of options.apiPlugins ?? []) await app.register(plugin, { prefix: '/api' });
  for (const plugin of options.rootPlugins ?? []) await app.register(plugin);
  await app.register(consoleRoutes);
  return app;
}
