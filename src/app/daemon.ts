import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { openLocalEngine } from './open-local-engine.ts';
import { MergedModelRegistry } from '../inference/merged-model-registry.ts';
import { UpstreamRegistry } from '../inference/upstream-registry.ts';
import { createSolveService } from '../quantum/solve-service.ts';
import { createHardwareSubstrate } from '../quantum/hardware/hardware-config.ts';
import { solveRoutes } from '../quantum/solve-routes.ts';
import { SqliteSolveJobStore } from '../quantum/jobs/solve-job-store.ts';
import { solveJobsRoutes } from '../quantum/jobs/solve-jobs-routes.ts';
import { SolveJobs } from '../quantum/jobs/solve-jobs.ts';
import { buildBaseApp, buildLocalApp, installListenerGuards } from '../runtime/local-app.ts';
import { createHttpServer } from '../http/http-server.ts';
import { isLoopbackHostname } from '../shared/loopback-hostname.ts';
import type { RuntimeConfig } from './runtime-config.ts';
import { SVC_VERSION } from '../shared/version.ts';
import { OffThread } from '../shared/off-thread.ts';
import { OffThreadEmbeddingRegistry } from '../spaces/off-thread-embeddings.ts';
import { openDeveloperKeyVerifier } from '../accounts/developer-keys/open-developer-key-verifier.ts';
import { DeveloperKeyFileError } from '../accounts/developer-keys/file-key-verifier.ts';
import type { DeveloperKeyVerifier } from '../accounts/developer-keys/developer-key-verifier.ts';
import { ConfigError } from '../shared/config-values.ts';
import { openSpacesRuntime, SpacesEmbedderError, type SpacesRuntime } from '../spaces/spaces-runtime.ts';
import { LocalRuntimeClient } from '../mcp/local-runtime-client.ts';
import { DEFAULT_MCP_BODY_LIMIT, mcpRoutes } from '../mcp/mcp-routes.ts';
import { openAITools } from '../mcp/openai-tools.ts';
import { SpaceChanges } from '../mcp/space-changes.ts';
import { OutboundMonitor } from '../transport/outbound-monitor.ts';
import { plainTransportHealth, TransportSecurity } from '../transport/transport-security.ts';
import { openTelemetry } from '../telemetry/telemetry-runtime.ts';
import { ResponseStore } from '../openai/response-store.ts';

/** How long the start-up line waits for upstreams to list their models (they finish later if slower). */
const UPSTREAM_DISCOVERY_WAIT_MS = 3_000;
/**
 * After the grace period, stopped generations still answer 503 before their sockets close; this
 * is how long they get before every connection is cut. It only delays an exit that would otherwise
 * cut a response short (a client that stopped reading, a decode stuck in native code): at 1 s, a
 * busy 2-core machine sometimes cut the 503s themselves.
 */
const CUT_CONNECTIONS_AFTER_ABORT_MS = 5_000;

export interface Daemon {
  /** `http://127.0.0.1:11435`, `http://[::1]:11435`, … */
  urls: string[];
  app: FastifyInstance;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), unloads models. */
  close(): Promise<void>;
}

/** Whether a listening socket's address is a loopback IP (read back from the socket, not assumed). */
function isLoopbackAddress(address: ReturnType<Server['address']>): boolean {
  return typeof address === 'object' && address !== null && isLoopbackHostname(address.address);
}

function urlOf(host: string, port: number, scheme: 'http' | 'https'): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ port, host, exclusive: true }, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Opens the developer-key source before anything else starts: a broken one stops the start with one line. */
async function openDeveloperKeys(config: RuntimeConfig, log: Logger): Promise<DeveloperKeyVerifier | undefined> {
  if (config.developerKeys === undefined) return undefined;
  const keyLog = log.child({ component: 'developer-keys' });
  try {
    const verifier = await openDeveloperKeyVerifier(config.developerKeys.source, { onWarning: (message) => keyLog.warn(message) });
    keyLog.info(
      { source: verifier.source, keys: verifier.keyCount(), enforced: config.developerKeys.required },
      `developer keys: ${verifier.keyCount()} active from the ${verifier.source === 'file' ? 'key file' : 'hosted store'}; requests without a key are ${config.developerKeys.required ? 'refused' : 'served anonymously'}`,
    );
    return verifier;
  } catch (error) {
    if (error instanceof DeveloperKeyFileError) throw new ConfigError(`--developer-keys: ${error.message}`);
    throw error;
  }
}

/**
 * Starts `svc serve`: one Fastify app served on every configured port × loopback address.
 * Port 0 picks a free port once, then binds every address on that same port.
 */
export async function startDaemon(config: RuntimeConfig, log: Logger = pino({ level: config.logLevel })): Promise<Daemon> {
  // First, so every socket the start-up opens (a key store, upstream discovery) is counted.
  const outbound = new OutboundMonitor();
  outbound.start();
  let developerKeys: DeveloperKeyVerifier | undefined;
  let responses: ResponseStore | undefined;
  try {
    developerKeys = await openDeveloperKeys(config, log);
    // Before anything loads: a store a newer svc wrote stops the start with one line.
    responses = config.responses === undefined ? undefined : ResponseStore.open(ResponseStore.pathIn(config.dataDir), config.responses);
    return await startWith(config, log, developerKeys, outbound, responses);
  } catch (error) {
    outbound.stop();
    responses?.close();
    // A store's connection pool must not keep a process that failed to start alive.
    await developerKeys?.close();
    throw error;
  }
}

async function startWith(config: RuntimeConfig, log: Logger, developerKeys: DeveloperKeyVerifier | undefined, outbound: OutboundMonitor, responses: ResponseStore | undefined): Promise<Daemon> {
  // First: a bad or unreadable identity key stops the start before anything loads.
  const transport = config.pqcTransport === undefined ? undefined : new TransportSecurity(config.pqcTransport, { dataDir: config.dataDir, hosts: config.hosts });
  const scheme = transport === undefined ? 'http' : 'https';
  const { catalog, engine } = await openLocalEngine(config, log);
  // A remote upstream's sockets are outbound even through a tunnel on loopback.
  const upstreams = new UpstreamRegistry(config.upstreams, { log: log.child({ component: 'upstream' }), onRemoteSocket: (socket) => outbound.countAsOutbound(socket) });
  for (const spec of config.upstreams) {
    if (spec.apiKeyEnv !== undefined && spec.apiKey === undefined) {
      log.warn({ upstream: spec.name, apiKeyEnv: spec.apiKeyEnv }, `upstream '${spec.name}': the environment variable ${spec.apiKeyEnv} (api_key_env) is not set; requests go without a key`);
    }
  }
  // Discovery runs while the app is assembled; the start-up line waits for it a little, so
  // upstream models are listed from the first request when the upstreams answer promptly.
  const discovery = upstreams.start(UPSTREAM_DISCOVERY_WAIT_MS);
  // Local models win an id both have; the upstream's model is then unreachable, said once.
  const served = new MergedModelRegistry([engine, upstreams], (id, owners) => {
    log.warn({ model: id, owners }, `model id '${id}' is served by ${owners[0]}; the same id from upstream '${owners[1]}' is hidden`);
  });
  let spaces: SpacesRuntime;
  // Told of every document change, whoever made it, for MCP clients' resource lists.
  const spaceChanges = new SpaceChanges();
  // The job log (always) and `basic` reports (docs/telemetry.md).
  const telemetryLog = log.child({ component: 'telemetry' });
  const telemetry = openTelemetry({
    dataDir: config.dataDir,
    settings: config.telemetrySettings,
    log: { info: (message) => telemetryLog.info(message), warn: (fields, message) => telemetryLog.warn(fields, message) },
  });
  try {
    spaces = await openSpacesRuntime({ dataDir: config.dataDir, embedder: config.spacesEmbedder, models: served, onDocumentsChanged: () => spaceChanges.changed(), jobLog: telemetry.jobLog });
  } catch (error) {
    await Promise.all([engine.close(), upstreams.close(), telemetry.close()]);
    throw error instanceof SpacesEmbedderError ? new ConfigError(error.message) : error;
  }
  // One intake worker parses every large body, for the OpenAI routes and the solve endpoints.
  const offThread = new OffThread();
  // The built-in embedder is a model too (last: a served model with the same id would win); its
  // /v1/embeddings work runs on the intake worker (off-thread-embeddings.ts).
  const registry = new MergedModelRegistry([served, new OffThreadEmbeddingRegistry(spaces.models, offThread)]);
  // vendor-eagle: a provider only when --quantum-provider is set (no outbound traffic otherwise).
  const solver = createSolveService({ offThread, hardware: createHardwareSubstrate(config.hardware) });
  // Solve jobs (`/api/solve/jobs`): stored in the data dir, run on the same pool; jobs a previous run left unfinished start again.
  const solveJobStore = new SqliteSolveJobStore(SqliteSolveJobStore.pathIn(config.dataDir));
  const solveJobs = await SolveJobs.open({ service: solver, store: solveJobStore, offThread });
  if (config.hardware !== undefined) log.info({ quantumProvider: new URL(config.hardware.providerUrl).origin, quantumBackend: config.hardware.backend }, `substrate vendor-eagle: ${config.hardware.backend} at ${new URL(config.hardware.providerUrl).origin}`);
  const draining = new AbortController();
  const shutdown = new AbortController();
  const requestTimeoutMs = Number.isFinite(config.requestTimeoutMs) ? config.requestTimeoutMs : 0;
  const urls: string[] = [];
  // MCP tool handlers call this daemon over its own loopback listener, as any client would.
  const mcpRuntime = new LocalRuntimeClient({ baseUrl: () => urls[0] ?? 'http://127.0.0.1:0', ca: transport?.identity.certificatePem, groups: transport?.pqc.groups });
  const mcpLog = log.child({ component: 'mcp' });
  const mcpPlugin = async (root: FastifyInstance): Promise<void> => {
    await root.register(mcpRoutes, {
      runtime: mcpRuntime,
      log: { info: (fields, message) => mcpLog.info(fields, message), warn: (fields, message) => mcpLog.warn(fields, message) },
      changes: spaceChanges,
      ...config.mcp,
      bodyLimit: Math.min(config.bodyLimit, DEFAULT_MCP_BODY_LIMIT),
      drainingSignal: draining.signal,
    });
    // Outside the JSON-RPC scope: an OpenAI-tools client reads the OpenAI error envelope.
    root.get('/openai-tools', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(openAITools()));
  };
  const developerKeyOptions = developerKeys === undefined || config.developerKeys === undefined
    ? undefined
    : { verifier: developerKeys, required: config.developerKeys.required, limit: config.developerKeys.limit };
  const app = await buildLocalApp({
    models: registry,
    // The built-in embedder is always in memory.
    loadedModels: () => [...engine.loadedModels(), ...spaces.models.list().map((m) => m.id)],
    memoryBytes: (id) => engine.memoryBytes(id),
    residency: engine,
    // Pulls are the one outbound connection the daemon opens for models, and only when asked.
    modelLibrary: { files: engine, dataDir: config.dataDir, hubEndpoint: config.hub?.endpoint, token: config.hub?.token },
    drainingSignal: draining.signal,
    shutdownSignal: shutdown.signal,
    bodyLimit: config.bodyLimit,
    requestTimeoutMs,
    offThread,
    logger: log,
    fingerprint: `svc-${SVC_VERSION}`,
    apiPlugins: [
      async (api) => {
        await api.register(solveRoutes, { service: solver });
        await api.register(solveJobsRoutes, { jobs: solveJobs, closing: draining.signal });
      },
      spaces.plugin,
    ],
    // `/mcp` shares this listener unless --mcp-port gives it its own (below).
    rootPlugins: [...(config.mcp.port === undefined ? [mcpPlugin] : []), telemetry.plugin],
    jobLog: telemetry.jobLog,
    spaces: spaces.library,
    responses,
    developerKeys: developerKeyOptions,
    transport,
    health: async (request) => ({
      version: SVC_VERSION,
      model: {
        engine: 'llama.cpp',
        threads: config.threads,
        available: catalog.list().map((m) => m.id),
        loaded: engine.loadedModels(),
        ...engine.load(),
        // What discovery skipped at start-up (broken files, id collisions), for `svc models list`.
        warnings: catalog.warnings,
      },
      substrate: 'local',
      quantum: { ...solver.capability(), ...solver.load, jobs: solveJobs.counts },
      // `mcp`: where MCP clients connect (the daemon's own addresses unless --mcp-port).
      network: { listen: urls, mcp: (mcpUrls.length > 0 ? mcpUrls : urls).map((u) => `${u}/mcp`), loopback_only: servers.every((s) => isLoopbackAddress(s.address())) },
      telemetry: config.telemetry,
      // Every client socket the process opens, whoever opens it (docs/runtime.md#outbound-connections).
      ...outbound.health(),
      // Read from the connection this request came on: its protocol, suite and key-exchange group.
      ...(transport === undefined ? plainTransportHealth() : transport.health(request.raw.socket)),
      upstreams: upstreams.health(),
      cpus: availableParallelism(),
      retrieval: await spaces.health(),
      // `telemetry` above stays the mode; when the last basic report got through (null before).
      telemetry_last_sent_at: telemetry.reporter.lastSentAt,
      // Where keys come from and how many, never a path, URL or hash.
      ...(developerKeys === undefined
        ? {}
        : { developer_keys: { source: developerKeys.source, enforced: config.developerKeys?.required === true, keys: developerKeys.keyCount() } }),
    }),
  });
  await app.ready();
  let mcpApp: FastifyInstance | undefined;
  if (config.mcp.port !== undefined) {
    mcpApp = buildBaseApp({ logger: log, bodyLimit: config.bodyLimit, requestTimeoutMs, drainingSignal: draining.signal, developerKeys: developerKeyOptions, transport });
    await installListenerGuards(mcpApp);
    await mcpApp.register(mcpPlugin);
    await mcpApp.ready();
  }
  const mcpUrls: string[] = [];

  // Every (port, host) pair gets its own http.Server sharing Fastify's router.
  const servers: Server[] = [];
  const fail = async (error: unknown): Promise<never> => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await mcpApp?.close();
    await solveJobs.close();
    await Promise.all([engine.close(), solver.close(), offThread.close(), upstreams.close(), spaces.close(), telemetry.close(), solveJobStore.close()]);
    throw error;
  };
  for (const requestedPort of config.ports) {
    // Port 0: the first host picks a free port and the others bind the same one; if another
    // process holds it on one of them, start over with a new pick (a few times).
    for (let attempt = 1; ; attempt++) {
      const bound: { server: Server; url: string }[] = [];
      let port = requestedPort;
      let retry = false;
      for (const [i, host] of config.hosts.entries()) {
        const server = i === 0 && servers.length === 0 ? app.server : createHttpServer(requestTimeoutMs, app.routing, undefined, transport);
        try {
          port = await listen(server, port, host);
          bound.push({ server, url: urlOf(host, port, scheme) });
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // ::1 is missing on hosts without IPv6; serve IPv4 alone rather than fail.
          if (i > 0 && (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT')) {
            log.warn({ host, port }, `cannot listen on ${urlOf(host, port, scheme)} (${code}); continuing without it`);
            continue;
          }
          if (requestedPort === 0 && i > 0 && code === 'EADDRINUSE' && attempt < 5) {
            retry = true;
            break;
          }
          servers.push(...bound.map((b) => b.server));
          return fail(error);
        }
      }
      if (retry) {
        await Promise.all(bound.map((b) => new Promise((r) => b.server.close(r))));
        continue;
      }
      for (const b of bound) {
        servers.push(b.server);
        urls.push(b.url);
      }
      break;
    }
  }

  if (mcpApp !== undefined && config.mcp.port !== undefined) {
    // Its own port on every host the daemon binds; 0 picks one free port for all of them.
    let port = config.mcp.port;
    for (const [i, host] of config.hosts.entries()) {
      const server = i === 0 ? mcpApp.server : createHttpServer(requestTimeoutMs, mcpApp.routing, undefined, transport);
      try {
        port = await listen(server, port, host);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (i > 0 && (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT')) continue;
        return fail(error);
      }
      servers.push(server);
      mcpUrls.push(urlOf(host, port, scheme));
    }
  }

  await discovery;
  // The built-in embedder is always there; "no model" means nothing that chats or a GGUF embedder.
  const models = served.list().map((m) => m.id);
  log.info(
    { addresses: urls, ...(mcpUrls.length > 0 ? { mcp_addresses: mcpUrls } : {}), models, dataDir: config.dataDir, threads: config.threads },
    `svc ${SVC_VERSION} listening on ${urls.join(', ')}${mcpUrls.length > 0 ? `; MCP on ${mcpUrls.map((u) => `${u}/mcp`).join(', ')}` : ''}`,
  );
  if (transport !== undefined) {
    const { fields, message } = transport.startupLine('health and requested responses');
    log.info(fields, message);
  }
  // Once each, at start-up: what discovery skipped (broken files, id collisions) and why.
  for (const warning of catalog.warnings) log.warn({ component: 'models' }, warning);
  if (models.length === 0 && upstreams.size > 0) {
    log.warn({ upstreams: config.upstreams.map((u) => u.name) }, 'no model available yet: no local model is configured and no upstream has listed one');
  } else if (models.length === 0) {
    log.warn(
      { modelsDir: join(config.dataDir, 'models') },
      'no model configured: chat and completions answer 404 (embeddings have only the built-in svc-hashed-embed-v2) until you start with --model /path/to/model.gguf or put a .gguf file in the models directory (Ollama, Hugging Face and LM Studio models are found unless --discover turns them off)',
    );
  } else {
    log.info({ models }, `models: ${models.join(', ')}`);
  }
  telemetry.start();
  if (catalog.size > 0) {
    // After the start-up line, so the daemon is reachable at once; models still load lazily.
    setImmediate(() => void engine.warmUp());
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      log.info({ graceMs: config.shutdownGraceMs }, 'shutting down: no new requests, finishing in-flight ones');
      draining.abort();
      // We listen ourselves (several servers share Fastify's router), so we also close them:
      // stop accepting, drop idle keep-alive sockets, and wait for in-flight responses.
      const serversClosed = Promise.all(servers.map((s) => new Promise((r) => {
        s.close(r);
        s.closeIdleConnections();
      })));
      const grace = setTimeout(() => {
        log.warn('grace period over: stopping generations');
        shutdown.abort(new Error('daemon shutting down'));
        setTimeout(() => {
          for (const s of servers) s.closeAllConnections();
        }, CUT_CONNECTIONS_AFTER_ABORT_MS).unref();
      }, Number.isFinite(config.shutdownGraceMs) ? config.shutdownGraceMs : 2 ** 31 - 1);
      grace.unref();
      await serversClosed;
      clearTimeout(grace);
      await app.close();
      await mcpApp?.close();
      spaceChanges.close();
      // Running jobs are stopped and stay `running` in the store: the next start takes them up.
      await solveJobs.close();
      await solveJobStore.close();
      await Promise.all([engine.close(), solver.close(), offThread.close(), upstreams.close(), developerKeys?.close(), spaces.close()]);
      responses?.close();
      outbound.stop();
      // Last: jobs that finished during shutdown are still written.
      await telemetry.close();
      log.info('stopped');
    })();
    return closing;
  };
  return { urls, app, close };
}
