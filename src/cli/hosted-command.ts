import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import type { HostedServerConfig } from '../app/hosted-server.ts';
import { hardwareFrom, LOG_LEVELS, pqcTransportFrom, resolveEngineSettings, type RawEngineOptions } from '../app/runtime-config.ts';
import { ConfigError, parseBytes, parseDuration } from '../shared/config-values.ts';
import type { RawHardwareOptions } from '../quantum/hardware/hardware-config.ts';
import { hardwareOptions } from './hardware-options.ts';
import { runServer } from './run-server.ts';
import { engineOptions, REDACTED_LOG_PATHS } from './serve-command.ts';
import { DEFAULT_KEY_PREFIX } from '../accounts/limits/redis-rate-limiter.ts';
import { createNodeToken, parseNodeTokenHashes } from '../hosted/nodes/node-tokens.ts';

/** The hosted tier's port: next to the local runtime's 11435 and 11440, so both run on one machine. */
export const DEFAULT_HOSTED_PORT = 11450;

interface RawHostedOptions extends RawEngineOptions, RawHardwareOptions {
  host?: string;
  port?: string;
  dataDir?: string;
  databaseUrl?: string;
  redisUrl?: string;
  redisKeyPrefix?: string;
  databasePoolSize?: string;
  routes?: string;
  enterprise?: boolean;
  corsOrigin?: string[];
  publicOrigin?: string[];
  secureCookies?: boolean;
  bodyLimit?: string;
  requestTimeout?: string;
  shutdownTimeout?: string;
  logLevel?: string;
  pqcTransport?: string[];
  nodeTokenHash?: string[];
  nodeTtl?: string;
  /** `--no-local-solves` sets it false. */
  localSolves?: boolean;
  jobLock?: string;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** Origins as the flags give them (repeatable, or comma-separated), each checked: scheme://host[:port]. */
function databasePoolSizeFrom(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const size = z.coerce.number().int().min(1).max(1000).safeParse(value);
  if (!size.success) throw new ConfigError(`--database-pool-size: '${value}' must be a whole number from 1 to 1000.`);
  return size.data;
}

/** A Redis key prefix: printable, no spaces, short (it starts every key the limiter writes). */
function redisKeyPrefixFrom(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,64}$/.test(value)) throw new ConfigError(`--redis-key-prefix: '${value}' must be 1 to 64 printable characters without spaces.`);
  return value;
}

function originList(values: readonly string[] | undefined, flag: string, allowAny: boolean): string[] {
  const origins = (values ?? []).flatMap((o) => o.split(',')).map((o) => o.trim()).filter((o) => o !== '');
  for (const origin of origins) {
    if (allowAny && origin === '*') continue;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/+$/, '').toLowerCase()) {
      throw new ConfigError(`${flag} ${origin}: an origin is scheme://host[:port], e.g. https://app.example.com${allowAny ? ' (or * for any)' : ''}.`);
    }
  }
  return origins.map((o) => (o === '*' ? o : new URL(o).origin));
}

/** Flags and SVC_* variables → the server's settings; throws ConfigError (exit 2) with one line. */
export function resolveHostedConfig(raw: RawHostedOptions, env: NodeJS.ProcessEnv = process.env): HostedServerConfig {
  const port = z.coerce.number().int().min(0).max(65535).safeParse(raw.port ?? DEFAULT_HOSTED_PORT);
  if (!port.success) throw new ConfigError(`--port: '${raw.port}' must be a whole number from 0 to 65535.`);
  const host = (raw.host ?? '127.0.0.1').replace(/^\[|\]$/g, '');
  if (host === '') throw new ConfigError('--host: give an address to listen on (0.0.0.0 for every IPv4 interface).');
  const origins = originList(raw.corsOrigin, '--cors-origin', true);
  const publicOrigins = originList(raw.publicOrigin, '--public-origin', false);
  const dataDir = resolve(raw.dataDir ?? join(homedir(), '.svc', 'hosted'));
  if (raw.localSolves === false && (raw.redisUrl ?? '') === '') {
    throw new ConfigError('--no-local-solves: solve jobs would wait for workers that cannot see them; give --redis-url (the queue svc worker processes take jobs from).');
  }
  return {
    host,
    port: port.data,
    dataDir,
    databaseUrl: raw.databaseUrl,
    redisUrl: raw.redisUrl,
    redisKeyPrefix: redisKeyPrefixFrom(raw.redisKeyPrefix),
    databasePoolSize: databasePoolSizeFrom(raw.databasePoolSize),
    routesFile: raw.routes,
    enterprise: raw.enterprise === true,
    corsOrigins: origins,
    publicOrigins,
    secureCookies: raw.secureCookies === true,
    bodyLimit: parseBytes(raw.bodyLimit ?? '8mb', '--body-limit'),
    requestTimeoutMs: parseDuration(raw.requestTimeout ?? '30s', '--request-timeout'),
    shutdownGraceMs: parseDuration(raw.shutdownTimeout ?? '10s', '--shutdown-timeout'),
    // The embedded route config's `engine` backend serves these (its `@default` model: the first chat model).
    engine: resolveEngineSettings(raw, dataDir),
    release: { downloadUrl: env.SVC_DOWNLOAD_URL, updaterManifestUrl: env.SVC_UPDATER_MANIFEST_URL, notes: env.SVC_RELEASE_NOTES },
    pqcTransport: pqcTransportFrom(raw.pqcTransport),
    hardware: hardwareFrom(raw),
    nodeTokens: parseNodeTokenHashes(raw.nodeTokenHash),
    nodeTtlMs: parseDuration(raw.nodeTtl ?? '15s', '--node-ttl'),
    localSolves: raw.localSolves !== false,
    solveJobLockMs: raw.jobLock === undefined ? undefined : parseDuration(raw.jobLock, '--job-lock'),
  };
}

/** `svc hosted`: the hosted tier. Every flag has an SVC_* environment variable. */
export function registerHostedCommand(program: Command): void {
  const hosted = program
    .command('hosted')
    .description('run the hosted tier: keys, routing with evidence, Joules metering and usage under /api')
    .addOption(new Option('--host <host>', 'address to listen on (any address: this is the public tier) [default: 127.0.0.1]').env('SVC_HOSTED_HOST'))
    .addOption(new Option('-p, --port <port>', `port to listen on (0 picks a free one) [default: ${DEFAULT_HOSTED_PORT}]`).env('SVC_HOSTED_PORT'))
    .addOption(new Option('-d, --data-dir <dir>', 'where the embedded store keeps its database; GGUF files in <dir>/models are served [default: ~/.svc/hosted]').env('SVC_HOSTED_DATA_DIR'));
  // The engine backend's models: the same flags (and SVC_* variables) as `svc serve`.
  for (const option of engineOptions()) hosted.addOption(option);
  // vendor-eagle's provider: enterprise accounts only (hosted-solve-plugin.ts checks the plan first).
  for (const option of hardwareOptions()) hosted.addOption(option);
  hosted
    .addOption(new Option('--database-url <url>', 'PostgreSQL URL: share accounts, keys and the ledger between replicas').env('SVC_DATABASE_URL'))
    .addOption(new Option('--database-pool-size <n>', 'PostgreSQL connections this replica may hold [default: 10]').env('SVC_DATABASE_POOL_SIZE'))
    .addOption(new Option('--redis-url <url>', 'Redis URL: the rate limiter\'s buckets, shared by every replica on it').env('SVC_REDIS_URL'))
    .addOption(new Option('--redis-key-prefix <prefix>', `prefix of every Redis key the limiter writes; deployments sharing one Redis each need their own [default: ${DEFAULT_KEY_PREFIX}]`).env('SVC_REDIS_KEY_PREFIX'))
    .addOption(new Option('--no-local-solves', 'only queue solve jobs (/api/solve/jobs) on Redis; svc worker processes run them (/api/solve stays local)').env('SVC_NO_LOCAL_SOLVES'))
    .addOption(new Option('--job-lock <duration>', 'how long a running solve job\'s Redis lock lasts unrenewed: a replica that dies has its job run elsewhere after it [default: 30s]').env('SVC_JOB_LOCK'))
    .addOption(new Option('--routes <file>', 'route configuration, TOML or JSON [default: the embedded one]').env('SVC_ROUTES'))
    .addOption(new Option('--enterprise', 'enterprise fleet mode: the model API also at /v1, for enterprise keys').env('SVC_ENTERPRISE'))
    .addOption(new Option('--public-origin <origin>', 'the origin browsers reach this server at, behind a proxy that rewrites Host (key-page requests must come from it); repeat for several [default: the request\'s Host]').env('SVC_PUBLIC_ORIGIN').argParser(collect))
    .addOption(new Option('--cors-origin <origin>', 'a browser origin allowed to call the API; repeat for several, * for any [default: none]').env('SVC_CORS_ORIGIN').argParser(collect))
    .addOption(new Option('--pqc-transport <list>', 'serve HTTPS with TLS 1.3 and post-quantum key exchange only, e.g. ml-kem-768,ml-dsa-65 (ml-dsa-*: every svc_route evidence record and response signed) [default: none]').env('SVC_PQC_TRANSPORT').argParser(collect))
    .addOption(new Option('--secure-cookies', 'mark the sign-in cookie Secure even on plain HTTP (TLS ends at a proxy in front)').env('SVC_SECURE_COOKIES'))
    .addOption(new Option('--body-limit <size>', 'largest request body [default: 8mb]').env('SVC_BODY_LIMIT'))
    .addOption(new Option('--request-timeout <duration>', 'time allowed to upload a request [default: 30s]').env('SVC_REQUEST_TIMEOUT'))
    .addOption(new Option('--shutdown-timeout <duration>', 'grace for in-flight requests on SIGINT/SIGTERM [default: 10s]').env('SVC_SHUTDOWN_TIMEOUT'))
    .addOption(new Option('--node-token-hash <entry>', 'an inference node that may join, as NAME:sha256:HEX from `svc hosted node-token create`; repeat for several (docs/inference-nodes.md)').env('SVC_NODE_TOKEN_HASHES').argParser(collect))
    .addOption(new Option('--node-ttl <duration>', 'drop a node not heard from for this long; nodes beat every third of it [default: 15s]').env('SVC_NODE_TTL'))
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).env('SVC_LOG_LEVEL'))
    .action(async (parsed: RawHostedOptions) => {
      const config = resolveHostedConfig(parsed);
      // Imported here so `svc --help` and other commands start without the server stack.
      const [{ default: pino }, { startHostedServer }] = await Promise.all([import('pino'), import('../app/hosted-server.ts')]);
      const log = pino({ level: parsed.logLevel ?? 'info', redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } });
      await runServer(() => startHostedServer(config, log), log, () => `port ${config.port} is already in use on ${config.host}; choose one with --port`);
    });
  // `svc hosted node-token create --name gpu-1`: the token for the node, the hash line for the gateway.
  hosted
    .command('node-token')
    .description('inference-node tokens (docs/inference-nodes.md)')
    .command('create')
    .description('print a new node token (give it to the node: SVC_NODE_TOKEN) and the NAME:sha256:HEX entry for the gateway (--node-token-hash)')
    .requiredOption('--name <name>', 'the node\'s name: its id in route evidence and logs')
    .option('--json', 'print {name, token, node_token_hash} as JSON')
    .action((options: { name: string; json?: boolean }) => {
      const { token, entry } = createNodeToken(options.name);
      if (options.json === true) {
        process.stdout.write(`${JSON.stringify({ name: options.name, token, node_token_hash: entry })}\n`);
        return;
      }
      process.stdout.write(`node token (shown once; give it to the node as SVC_NODE_TOKEN):\n  ${token}\ngateway entry (--node-token-hash or SVC_NODE_TOKEN_HASHES; not a secret):\n  ${entry}\n`);
    });
}
