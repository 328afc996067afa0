import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { defaultThreads } from '../inference/cpu-threads.ts';
import { DEFAULT_MAX_LOADED_MODELS } from '../inference/default-max-loaded-models.ts';
import { SPECULATIVE_MODES, type GpuChoice, type SpeculativeSettings } from '../inference/llama-engine-options.ts';
import { parseModelSpec, type ModelSpec } from '../inference/model-catalog.ts';
import type { UpstreamSpec } from '../inference/upstream-registry.ts';
import type { BucketLimit } from '../accounts/limits/limits-config.ts';
import { DEFAULT_DEVELOPER_KEY_LIMIT } from '../runtime/developer-key-guard.ts';
import { parseDiscoverSources, type DiscoverableSource } from '../models/model-discovery.ts';
import { ConfigError, parseBytes, parseDuration } from '../shared/config-values.ts';
import { isLoopbackHostname } from '../shared/loopback-hostname.ts';
import { resolveUpstreams, upstreamFromFlag, UpstreamConfigError, type UpstreamTable } from '../inference/upstream-config.ts';
import { parsePqcTransport, PqcTransportError, type PqcTransport } from '../transport/pqc-transport-options.ts';
import { resolveHardwareConfig, type HardwareConfig, type RawHardwareOptions } from '../quantum/hardware/hardware-config.ts';
import { resolveTelemetrySettings, TelemetryConfigError, type TelemetrySettings } from '../telemetry/telemetry-settings.ts';

/** The llama.cpp engine's settings: shared by `svc serve` and `svc hosted` (open-local-engine.ts). */
export type EngineSettings = Pick<RuntimeConfig, 'dataDir' | 'models' | 'discover' | 'keepAliveMs' | 'maxLoadedModels' | 'parallel' | 'queueSize' | 'contextSize' | 'defaultMaxTokens' | 'gpu' | 'threads' | 'speculative'>;

/** The engine's flags as the CLI hands them over (raw strings). */
export type RawEngineOptions = Pick<RawRuntimeOptions, 'model' | 'discover' | 'keepAlive' | 'maxLoadedModels' | 'parallel' | 'queueSize' | 'contextSize' | 'maxTokens' | 'gpu' | 'threads' | 'speculative' | 'draftModel'>;

/** The daemon's settings after flags, environment and defaults are merged and checked. */
export interface RuntimeConfig {
  ports: number[];
  hosts: string[];
  dataDir: string;
  models: ModelSpec[];
  /** Other tools' model stores searched at start-up (`--discover`). */
  discover: ReadonlySet<DiscoverableSource>;
  logLevel: LogLevel;
  keepAliveMs: number;
  /** Most models in memory at once (`--max-loaded-models`; the engine's DEFAULT_MAX_LOADED_MODELS). */
  maxLoadedModels: number;
  parallel: number;
  queueSize: number;
  contextSize: number | undefined;
  /** Reply tokens when a request sets no max_tokens. */
  defaultMaxTokens: number;
  gpu: GpuChoice;
  /** CPU threads for llama.cpp: `--threads`, or physical cores − 1 (cpu-threads.ts). */
  threads: number;
  /** `--speculative` and `--draft-model` (src/inference/speculative-decoding.ts). */
  speculative: SpeculativeSettings;
  bodyLimit: number;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  telemetry: TelemetrySettings['mode'];
  /** `--telemetry-endpoint` and the report interval (src/telemetry, docs/telemetry.md). */
  telemetrySettings: TelemetrySettings;
  /** OpenAI-compatible servers whose models are served beside the local ones. */
  upstreams: UpstreamSpec[];
  /** `--developer-keys`: where keys are checked; undefined means keys are not looked at. */
  developerKeys: DeveloperKeysConfig | undefined;
  /** `--spaces-embedder`: the model id whose embeddings knowledge spaces use; undefined, the built-in embedder. */
  spacesEmbedder: string | undefined;
  /** The MCP server on `/mcp` (src/mcp, docs/mcp.md). */
  mcp: McpConfig;
  /** `--pqc-transport`: HTTPS with post-quantum key exchange (src/transport, docs/transport.md); undefined, plain HTTP. */
  pqcTransport: PqcTransport | undefined;
  /** The responses store (`store: true`, docs/runtime.md "Stateful responses"); undefined with `--responses-max-size 0`: stateless. */
  responses: ResponsesStoreConfig | undefined;
  /** `--quantum-provider` and friends: the `vendor-eagle` substrate's provider (docs/solvers.md); undefined, none (503). */
  hardware: HardwareConfig | undefined;
  /** HF_ENDPOINT and HF_TOKEN, as `svc models pull` reads them: where `POST /v1/models/pull` resolves `hf:` references. */
  hub?: { endpoint: string | undefined; token: string | undefined } | undefined;
}

export interface McpConfig {
  /** `--mcp-port`: `/mcp` and `/openai-tools` on their own port (every host); undefined, on the daemon's ports. */
  port: number | undefined;
  /** `--mcp-stateless`: no sessions; each POST is served by a fresh server (no GET stream, no notifications). */
  stateless: boolean;
  /** `--mcp-max-sessions`: open sessions at most; one more is refused with 503. */
  maxSessions: number;
  /** `--mcp-session-idle`: a session without requests for this long is closed, ms. */
  sessionIdleMs: number;
}

export interface ResponsesStoreConfig {
  /** `--responses-retention`: a stored response is deleted this long after it was made, ms (Infinity: never by age). */
  retentionMs: number;
  /** `--responses-max-size`: the stored responses' total size at most, bytes; the oldest go first past it. */
  maxBytes: number;
}

export interface DeveloperKeysConfig {
  /** An exported key file, a `svc hosted` data dir, or a `postgres://` URL (kept as given: it may hold a password). */
  source: string;
  /** `--require-developer-key`: refuse requests without a valid key. */
  required: boolean;
  /** Per-key limit (`--developer-key-rate`, `--developer-key-burst`). */
  limit: BucketLimit;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_PORTS = [11435, 11440];
export const DEFAULT_HOSTS = ['127.0.0.1', '::1'];
/**
 * Reply tokens when a chat request sets no max_tokens. "Until the context is full" took minutes
 * on a CPU with a large context; 2048 covers ordinary answers, and clients that want more say so.
 */
export const DEFAULT_MAX_TOKENS = 2048;

/** What the CLI hands over: raw strings from flags or their environment variables. */
export interface RawRuntimeOptions extends RawHardwareOptions {
  port?: string[] | undefined;
  host?: string[] | undefined;
  dataDir?: string | undefined;
  model?: string[] | undefined;
  discover?: string | undefined;
  logLevel?: string | undefined;
  keepAlive?: string | undefined;
  maxLoadedModels?: string | undefined;
  parallel?: string | undefined;
  queueSize?: string | undefined;
  contextSize?: string | undefined;
  maxTokens?: string | undefined;
  gpu?: string | undefined;
  threads?: string | undefined;
  speculative?: string | undefined;
  draftModel?: string | undefined;
  bodyLimit?: string | undefined;
  requestTimeout?: string | undefined;
  shutdownTimeout?: string | undefined;
  telemetry?: string | undefined;
  /** `--pqc-transport` values, each a name or a comma list. */
  pqcTransport?: string[] | string | undefined;
  telemetryEndpoint?: string | undefined;
  /** `--upstream NAME=URL` values. */
  upstream?: string[] | undefined;
  /** `[[upstreams]]` tables from the config file, already checked against their schema. */
  upstreams?: UpstreamTable[] | undefined;
  developerKeys?: string | undefined;
  requireDeveloperKey?: boolean | undefined;
  developerKeyRate?: string | undefined;
  developerKeyBurst?: string | undefined;
  spacesEmbedder?: string | undefined;
  mcpPort?: string | undefined;
  mcpStateless?: boolean | undefined;
  mcpMaxSessions?: string | undefined;
  mcpSessionIdle?: string | undefined;
  responsesRetention?: string | undefined;
  responsesMaxSize?: string | undefined;
}

/** Repeatable options may also arrive as one comma-separated environment variable. */
function list(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

function integer(value: string | undefined, what: string, min: number, max: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  const result = z.coerce.number().int().min(min).max(max).safeParse(value);
  if (!result.success) throw new ConfigError(`${what}: '${value}' must be a whole number from ${min} to ${max}.`);
  return result.data;
}

function upstreamsFrom(raw: RawRuntimeOptions, env: NodeJS.ProcessEnv): UpstreamSpec[] {
  try {
    return resolveUpstreams(raw.upstreams ?? [], list(raw.upstream).map(upstreamFromFlag), env);
  } catch (error) {
    if (error instanceof UpstreamConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

function telemetryFrom(raw: RawRuntimeOptions, env: NodeJS.ProcessEnv): TelemetrySettings {
  try {
    return resolveTelemetrySettings(raw, env);
  } catch (error) {
    if (error instanceof TelemetryConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

function developerKeysFrom(raw: RawRuntimeOptions): DeveloperKeysConfig | undefined {
  const source = raw.developerKeys?.trim() ?? '';
  const rate = raw.developerKeyRate === undefined || raw.developerKeyRate === '' ? undefined : z.coerce.number().positive().max(1_000_000).safeParse(raw.developerKeyRate);
  if (rate !== undefined && !rate.success) throw new ConfigError(`--developer-key-rate: '${raw.developerKeyRate}' must be a number of requests per second above 0 (at most 1000000).`);
  const burst = integer(raw.developerKeyBurst, '--developer-key-burst', 1, 1_000_000);
  if (source === '') {
    if (raw.requireDeveloperKey === true) {
      throw new ConfigError('--require-developer-key needs --developer-keys: an exported key file (svc admin keys export), a svc hosted data dir, or a postgres:// URL.');
    }
    return undefined;
  }
  return {
    // A postgres URL stays as given; a path is made absolute so the log and errors are unambiguous.
    source: /^postgres(?:ql)?:\/\//i.test(source) ? source : resolve(source),
    required: raw.requireDeveloperKey === true,
    limit: {
      requests_per_second: rate?.data ?? DEFAULT_DEVELOPER_KEY_LIMIT.requests_per_second,
      burst: burst ?? DEFAULT_DEVELOPER_KEY_LIMIT.burst,
    },
  };
}

/** The engine's flags, checked (ConfigError with one line otherwise); models are also read from `<dataDir>/models`. */
export function resolveEngineSettings(raw: RawEngineOptions, dataDir: string): EngineSettings {
  const gpu = (raw.gpu ?? 'auto').toLowerCase();
  const gpuChoices = ['auto', 'cpu', 'cuda', 'vulkan', 'metal'];
  if (!gpuChoices.includes(gpu)) throw new ConfigError(`--gpu: '${raw.gpu}' is not one of ${gpuChoices.join(', ')}.`);
  let discover: ReadonlySet<DiscoverableSource>;
  try {
    discover = parseDiscoverSources(raw.discover);
  } catch (error) {
    throw new ConfigError(`--discover: ${(error as Error).message}.`);
  }
  return {
    dataDir,
    models: list(raw.model).map(parseModelSpec),
    discover,
    keepAliveMs: parseDuration(raw.keepAlive ?? '5m', '--keep-alive'),
    maxLoadedModels: integer(raw.maxLoadedModels, '--max-loaded-models', 1, 1024) ?? DEFAULT_MAX_LOADED_MODELS,
    parallel: integer(raw.parallel, '--parallel', 1, 64) ?? 4,
    queueSize: integer(raw.queueSize, '--queue-size', 0, 10_000) ?? 32,
    contextSize: integer(raw.contextSize, '--context-size', 256, 1 << 22),
    defaultMaxTokens: integer(raw.maxTokens, '--max-tokens', 1, 1 << 22) ?? DEFAULT_MAX_TOKENS,
    gpu: gpu as GpuChoice,
    threads: integer(raw.threads, '--threads', 1, 1024) ?? defaultThreads(),
    speculative: speculativeSettings(raw),
  };
}

/**
 * `--speculative` and `--draft-model`: off unless asked for; a draft model alone means draft
 * mode, and draft mode without one, or a draft model with another mode, is refused rather than
 * silently ignored.
 */
function speculativeSettings(raw: Pick<RawEngineOptions, 'speculative' | 'draftModel'>): SpeculativeSettings {
  const draftModel = raw.draftModel === undefined || raw.draftModel === '' ? undefined : resolve(raw.draftModel);
  const mode = (raw.speculative ?? (draftModel === undefined ? 'off' : 'draft')).toLowerCase();
  if (!(SPECULATIVE_MODES as readonly string[]).includes(mode)) throw new ConfigError(`--speculative: '${raw.speculative}' is not one of ${SPECULATIVE_MODES.join(', ')}.`);
  if (mode !== 'draft') {
    if (draftModel !== undefined) throw new ConfigError(`--draft-model is used by --speculative draft only; --speculative is ${mode}.`);
    return { mode: mode as 'off' | 'lookup' };
  }
  if (draftModel === undefined) throw new ConfigError('--speculative draft needs --draft-model: a small GGUF with the same vocabulary as the served models.');
  if (!existsSync(draftModel) || !statSync(draftModel).isFile()) throw new ConfigError(`--draft-model ${draftModel}: no such file.`);
  return { mode: 'draft', draftModelPath: draftModel };
}

/** `env`: where upstream keys are read (the variables the upstreams' api_key_env name). */
export function resolveRuntimeConfig(raw: RawRuntimeOptions, env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const ports = list(raw.port).map((p) => integer(p, '--port', 0, 65535)!);
  const hosts = list(raw.host);
  for (const host of hosts) {
    // IP literals only (and the exact name localhost): any other name would be resolved through
    // DNS at bind time, and a resolver could hand back a non-loopback address.
    const literal = host.replace(/^\[|\]$/g, '');
    if (!(host.toLowerCase() === 'localhost' || (isIP(literal) !== 0 && isLoopbackHostname(literal)))) {
      throw new ConfigError(
        `--host ${host}: the local daemon listens on loopback addresses only (127.0.0.1, ::1, localhost), so nothing off this machine can reach it. To use it from another machine, forward a port over SSH (ssh -L 11435:127.0.0.1:11435 this-host).`,
      );
    }
  }
  const logLevel = (raw.logLevel ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`--log-level: '${raw.logLevel}' is not one of ${LOG_LEVELS.join(', ')}.`);
  const telemetry = telemetryFrom(raw, env);
  const config: RuntimeConfig = {
    ports: ports.length > 0 ? [...new Set(ports)] : DEFAULT_PORTS,
    hosts: hosts.length > 0 ? [...new Set(hosts.map((h) => (h.toLowerCase() === 'localhost' ? '127.0.0.1' : h.replace(/^\[|\]$/g, ''))))] : DEFAULT_HOSTS,
    ...resolveEngineSettings(raw, resolve(raw.dataDir ?? join(homedir(), '.svc'))),
    logLevel: logLevel as LogLevel,
    bodyLimit: parseBytes(raw.bodyLimit ?? '16mb', '--body-limit'),
    requestTimeoutMs: parseDuration(raw.requestTimeout ?? '30s', '--request-timeout'),
    shutdownGraceMs: parseDuration(raw.shutdownTimeout ?? '10s', '--shutdown-timeout'),
    telemetry: telemetry.mode,
    telemetrySettings: telemetry,
    upstreams: upstreamsFrom(raw, env),
    developerKeys: developerKeysFrom(raw),
    spacesEmbedder: raw.spacesEmbedder === undefined || raw.spacesEmbedder.trim() === '' ? undefined : raw.spacesEmbedder.trim(),
    mcp: mcpFrom(raw),
    pqcTransport: pqcTransportFrom(raw.pqcTransport),
    hardware: hardwareFrom(raw),
    responses: responsesFrom(raw),
    hub: { endpoint: nonEmpty(env.HF_ENDPOINT), token: nonEmpty(env.HF_TOKEN) },
  };
  if (config.mcp.port !== undefined && config.mcp.port !== 0 && config.ports.includes(config.mcp.port)) {
    throw new ConfigError(`--mcp-port ${config.mcp.port}: the daemon already serves that port (with /mcp on it); pick another, or leave --mcp-port out to share it.`);
  }
  return config;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** OpenAI keeps a stored response 30 days; the cap keeps a busy agent's history from filling the disk. */
export const DEFAULT_RESPONSES_RETENTION = '30d';
export const DEFAULT_RESPONSES_MAX_SIZE = '1gb';

function responsesFrom(raw: RawRuntimeOptions): ResponsesStoreConfig | undefined {
  const maxBytes = parseBytes(raw.responsesMaxSize ?? DEFAULT_RESPONSES_MAX_SIZE, '--responses-max-size');
  const retentionMs = parseDuration(raw.responsesRetention ?? DEFAULT_RESPONSES_RETENTION, '--responses-retention');
  if (retentionMs < 60_000) {
    throw new ConfigError(`--responses-retention: '${raw.responsesRetention}' is shorter than a minute; to keep no responses at all, set --responses-max-size 0.`);
  }
  return maxBytes === 0 ? undefined : { retentionMs, maxBytes };
}

/** `--quantum-*`, for `svc serve` and `svc hosted` alike. */
export function hardwareFrom(raw: RawHardwareOptions): HardwareConfig | undefined {
  try {
    return resolveHardwareConfig(raw);
  } catch (error) {
    throw error instanceof ConfigError ? error : new ConfigError((error as Error).message);
  }
}

/** `--pqc-transport`, for `svc serve` and `svc hosted` alike. */
export function pqcTransportFrom(values: string[] | string | undefined): PqcTransport | undefined {
  try {
    return parsePqcTransport(values);
  } catch (error) {
    throw error instanceof PqcTransportError ? new ConfigError(error.message) : error;
  }
}

/** Sessions a daemon holds at once by default: many editors and agents, each with a few. */
export const DEFAULT_MCP_MAX_SESSIONS = 100;

function mcpFrom(raw: RawRuntimeOptions): McpConfig {
  const idle = parseDuration(raw.mcpSessionIdle ?? '30m', '--mcp-session-idle');
  if (idle < 1000) throw new ConfigError(`--mcp-session-idle: '${raw.mcpSessionIdle}' is shorter than a second; sessions would close between requests.`);
  return {
    port: integer(raw.mcpPort, '--mcp-port', 0, 65535),
    // As --require-developer-key: commander sets a flag's environment variable as true, whatever its value.
    stateless: raw.mcpStateless === true,
    maxSessions: integer(raw.mcpMaxSessions, '--mcp-max-sessions', 1, 100_000) ?? DEFAULT_MCP_MAX_SESSIONS,
    sessionIdleMs: idle,
  };
}
