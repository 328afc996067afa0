import { join } from 'node:path';
import type { Logger } from 'pino';
import { openLocalEngine } from './open-local-engine.ts';
import { createSolveService } from '../quantum/solve-service.ts';
import { createHardwareSubstrate, type HardwareConfig } from '../quantum/hardware/hardware-config.ts';
import type { EngineSettings } from './runtime-config.ts';
import { OffThread } from '../shared/off-thread.ts';
import { readBuildInfo } from '../hosted/build-info.ts';
import { buildHostedApp } from '../hosted/hosted-app.ts';
import type { ReleaseSettings } from '../hosted/release-record.ts';
import { evidencePlugin } from '../hosted/chat/evidence-route.ts';
import { hostedChatPlugin } from '../hosted/chat/hosted-chat-route.ts';
import { usagePlugin } from '../hosted/chat/usage-route.ts';
import { hostedSolvePlugin } from '../hosted/solve/hosted-solve-plugin.ts';
import { openSolveJobs, type OpenedSolveJobs } from '../quantum/jobs/open-solve-jobs.ts';
import { loadRouteConfig } from '../hosted/routing/load-route-config.ts';
import { RaplMeter } from '../hosted/routing/rapl-meter.ts';
import { RouteExecutor } from '../hosted/routing/route-executor.ts';
import { openRateLimiter } from '../accounts/limits/open-rate-limiter.ts';
import { openHostedStore } from '../accounts/store/open-hosted-store.ts';
import type { PqcTransport } from '../transport/pqc-transport-options.ts';
import { TransportSecurity } from '../transport/transport-security.ts';
import { NodeTokens, type NodeTokenEntry } from '../hosted/nodes/node-tokens.ts';
import { MemoryNodeRegistry, type NodeRegistry } from '../hosted/nodes/node-registry.ts';
import { RedisNodeRegistry } from '../hosted/nodes/redis-node-registry.ts';
import { NodePool } from '../hosted/nodes/node-pool.ts';
import { nodeRoutes } from '../hosted/nodes/node-routes.ts';
import { withNodesBackend } from '../hosted/nodes/nodes-route-config.ts';
import { DEFAULT_KEY_PREFIX } from '../accounts/limits/redis-rate-limiter.ts';

/** How long a node stays registered without a heartbeat, unless --node-ttl says. */
export const DEFAULT_NODE_TTL_MS = 15_000;

/** How long an Idempotency-Key binds its answer (Stripe keeps them 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

/** `svc hosted`'s settings after flags, environment and defaults are merged. */
export interface HostedServerConfig {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** PostgreSQL connections this replica may hold; default 10. */
  databasePoolSize?: number | undefined;
  /** Prefix of the limiter's Redis keys; default `svc:rl:`. */
  redisKeyPrefix?: string | undefined;
  routesFile: string | undefined;
  enterprise: boolean;
  corsOrigins: string[];
  /** Where browsers reach this server (behind a proxy that rewrites Host); empty: the request's own Host. */
  publicOrigins?: string[];
  /** The session cookie is Secure even on plain-HTTP requests (TLS ends at a proxy in front). */
  secureCookies?: boolean;
  bodyLimit: number;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  /** The in-process llama.cpp engine: models from --model, <dataDir>/models and --discover. */
  engine: EngineSettings;
  release: ReleaseSettings;
  /** `--pqc-transport`: HTTPS with post-quantum key exchange; with ML-DSA, signed route evidence. */
  pqcTransport?: PqcTransport | undefined;
  /** `--quantum-provider` and friends: the `vendor-eagle` substrate; undefined, none (503). */
  hardware?: HardwareConfig | undefined;
  /** `--node-token-hash`: the inference nodes that may join (none: no node routes answer but 401). */
  nodeTokens?: NodeTokenEntry[] | undefined;
  /** `--node-ttl`: a node not heard from for this long is dropped. */
  nodeTtlMs?: number | undefined;
  /** false (`--no-local-solves`): this gateway only queues solve jobs; `svc worker`s run them (needs Redis). */
  localSolves?: boolean;
  /** How long a solve job's Redis lock lasts without renewal (a dead worker's job runs elsewhere after it); default 30 s. */
  solveJobLockMs?: number;
}

/** Where solve jobs' BullMQ keys go: beside the limiter's, under the same deployment prefix. */
export function solveJobsPrefix(redisKeyPrefix: string | undefined): string {
  return `${(redisKeyPrefix ?? 'svc:rl:').replace(/rl:$/, '')}jobs`;
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
  const nodeTokens = new NodeTokens(config.nodeTokens ?? []);
  const loaded = loadRouteConfig(config.routesFile);
  // With nodes and the embedded configuration, the public policies try the nodes first.
  const routes = nodeTokens.size > 0 && config.routesFile === undefined ? withNodesBackend(loaded) : loaded;
  // Replicas share evidence keys only if they share this file: see docs/transport.md.
  const transport = config.pqcTransport === undefined ? undefined : new TransportSecurity(config.pqcTransport, {
    dataDir: config.dataDir,
    // The names clients reach it by: the listen address and the public origins' hosts.
    hosts: [config.host, ...(config.publicOrigins ?? []).map((o) => new URL(o).hostname.replace(/^\[|\]$/g, ''))],
  });
  const store = await openHostedStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
  const offThread = new OffThread();
  const draining = new AbortController();
  // Aborted when the grace period ends: running generations stop, open streams end with an error event.
  const shutdown = new AbortController();
  let local;
  try {
    local = await openLocalEngine(config.engine, log);
  } catch (error) {
    await Promise.all([store.close(), offThread.close()]);
    throw error;
  }
  const { catalog, engine } = local;
  // Measured Joules for engine backends where the host exposes RAPL; raw_joules is null elsewhere.
  const meter = RaplMeter.open();
  // Registrations live where every replica sees them: Redis with --redis-url, this process otherwise.
  let registry: NodeRegistry;
  try {
    registry = config.redisUrl !== undefined && config.redisUrl !== '' && nodeTokens.size > 0
      ? await RedisNodeRegistry.open(config.redisUrl, config.redisKeyPrefix ?? DEFAULT_KEY_PREFIX)
      : new MemoryNodeRegistry();
  } catch (error) {
    await Promise.all([store.close(), offThread.close(), engine.close()]);
    throw error;
  }
  const nodeTtlMs = config.nodeTtlMs ?? DEFAULT_NODE_TTL_MS;
  const nodes = new NodePool(registry);
  const executor = new RouteExecutor({ engine, meter, nodes });
  const solver = createSolveService({ offThread, hardware: createHardwareSubstrate(config.hardware) });
  // Solve jobs: PostgreSQL and BullMQ when the replicas share them, SQLite and an in-process queue otherwise.
  let solveJobs: OpenedSolveJobs;
  try {
    solveJobs = await openSolveJobs({
      service: solver, sqlitePath: join(config.dataDir, 'hosted', 'solve-jobs.db'), databaseUrl: config.databaseUrl,
      redisUrl: config.redisUrl, redisKeyPrefix: solveJobsPrefix(config.redisKeyPrefix), runJobs: config.localSolves !== false,
      lockDurationMs: config.solveJobLockMs, offThread,
    });
  } catch (error) {
    await Promise.all([store.close(), offThread.close(), engine.close(), solver.close(), registry.close()]);
    throw error;
  }
  // Shared by every replica through Redis when --redis-url is set; this process's own buckets otherwise.
  // The numbers come from the route configuration's `limits` table (defaults where absent).
  const limiter = await openRateLimiter({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix, limits: routes.limits, log });
  let app;
  try {
    app = await buildHostedApp({
      store, routes, limiter, offThread, logger: log, drainingSignal: draining.signal,
      enterprise: config.enterprise, corsOrigins: config.corsOrigins, publicOrigins: config.publicOrigins, bodyLimit: config.bodyLimit, secureCookies: config.secureCookies,
      requestTimeoutMs: config.requestTimeoutMs, build: readBuildInfo(), release: config.release, transport,
      v1Plugins: [hostedChatPlugin({ executor, limiter, shutdownSignal: shutdown.signal, signEvidence: transport === undefined ? undefined : (route) => transport.signEvidence(route) }), evidencePlugin(), usagePlugin()],
      apiPlugins: [hostedSolvePlugin({ service: solver, jobs: solveJobs.jobs, closing: draining.signal }), nodeRoutes({
        tokens: nodeTokens, registry, ttlMs: nodeTtlMs, heartbeatMs: Math.max(1, Math.floor(nodeTtlMs / 3)),
        onChange: (event, nodeId, url) => log.info({ node_id: nodeId, ...(url !== undefined ? { advertise_url: url } : {}) }, `inference node ${nodeId} ${event}`),
      })],
      solveJobsCapacity: () => solveJobs.capacity(),
    });
    // Fastify names the scheme from its own https option; with --pqc-transport the factory's server speaks TLS.
    await app.listen({ host: config.host, port: config.port, listenTextResolver: (address) => `Server listening at ${transport === undefined ? address : address.replace(/^http:/, 'https:')}` });
  } catch (error) {
    await solveJobs.close();
    await Promise.all([store.close(), offThread.close(), app?.close(), executor.close(), limiter.close(), engine.close(), solver.close(), registry.close()]);
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `${transport === undefined ? 'http' : 'https'}://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  log.info({ solveJobs: { queue: solveJobs.queue, store: solveJobs.store, runsJobs: config.localSolves !== false } }, `solve jobs: ${solveJobs.queue} queue, ${solveJobs.store} store${config.localSolves === false ? ', run by svc worker processes only' : ''}`);
  log.info({ addresses: [url], store: store.kind, enterprise: config.enterprise, routes: config.routesFile ?? 'embedded default' }, `svc hosted listening on ${url}`);
  if (transport !== undefined) {
    const { fields, message } = transport.startupLine('svc_route evidence, health and requested responses');
    log.info(fields, message);
  }
  const models = catalog.list().map((m) => m.id);
  for (const warning of catalog.warnings) log.warn({ component: 'models' }, warning);
  if (nodeTokens.size > 0) log.info({ node_tokens: nodeTokens.size, node_registry: registry.kind, node_ttl_ms: nodeTtlMs }, `inference nodes: ${nodeTokens.size} token(s); registrations in ${registry.kind}, dropped after ${nodeTtlMs} ms without a heartbeat`);
  log.info({ models, rapl: meter !== null }, models.length > 0
    ? `engine models: ${models.join(', ')}`
    : 'no engine model: engine backends fail over to the next backend (or 502) until you start with --model /path/to/model.gguf or put a .gguf file in <data-dir>/models');
  // After the start-up line, so the server is reachable at once; models still load lazily.
  if (catalog.size > 0) setImmediate(() => void engine.warmUp());

  // Idempotency-Keys bind for a day, as Stripe's do: then the key may be used again and the
  // answer kept for its replays is dropped (the ledger row and its evidence stay). Every replica
  // may run this; the update is the same wherever it runs.
  const releaseKeys = (): void => {
    store.releaseIdempotencyKeys(new Date(Date.now() - IDEMPOTENCY_KEY_TTL_MS)).then(
      (released) => { if (released > 0) log.info({ released }, 'released idempotency keys older than a day'); },
      (error: unknown) => log.warn({ err: error }, 'releasing old idempotency keys failed; retrying within the hour'),
    );
  };
  releaseKeys();
  const keyRelease = setInterval(releaseKeys, 3_600_000);
  keyRelease.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(keyRelease);
      log.info({ graceMs: config.shutdownGraceMs }, 'shutting down: no new requests, finishing in-flight ones');
      draining.abort();
      const grace = setTimeout(() => {
        log.warn('grace period over: stopping generations');
        shutdown.abort(new Error('svc hosted shutting down'));
        // A moment for the routes to bill what ran and send their error events, then the sockets go.
        setTimeout(() => app.server.closeAllConnections(), 1000).unref();
      }, Number.isFinite(config.shutdownGraceMs) ? config.shutdownGraceMs : 2 ** 31 - 1);
      grace.unref();
      await app.close();
      clearTimeout(grace);
      // Jobs running here are handed back to the queue (or, in-process, to the next start).
      await solveJobs.close();
      await Promise.all([store.close(), offThread.close(), executor.close(), limiter.close(), engine.close(), solver.close(), registry.close()]);
      log.info('stopped');
    })();
    return closing;
  };
  return { url, close };
}
