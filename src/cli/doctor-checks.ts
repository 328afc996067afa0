/**
 * The checks `svc doctor` runs, one small function each; every one resolves to a CheckResult and
 * never throws (a check that breaks is a `fail` line naming why). They live in the CLI room
 * because they are the CLI's own diagnosis of this machine, and ask a daemon through the CLI's
 * DaemonClient; the facts they read come from the rooms that own them (model discovery, the
 * engine's GPU choice, the data dir's private mode).
 */
import { constants, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, sep } from 'node:path';
import { llamaBindingOptions, type GpuChoice } from '../inference/llama-engine-options.ts';
import { discoverModels, discoveryRoots, type DiscoverableSource, type LocalModel } from '../models/model-discovery.ts';
import { PRIVATE_DIR_MODE } from '../shared/private-files.ts';
import { DaemonClient } from './daemon-client.ts';

export type Mark = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  /** What was checked, a word or two (`node`, `port 11435`). */
  name: string;
  mark: Mark;
  /** One line: what was found, and what to do when it is not ok. */
  detail: string;
  /** Further lines under it (the model sources and where they are). */
  notes?: string[];
}

const errorText = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) return errorText(error.errors[0]);
  return error instanceof Error ? error.message || (error as NodeJS.ErrnoException).code || error.name : String(error);
};

/** The Node that runs svc, against the range it needs (version.ts SVC_NODE_RANGE; only `>=N…` is judged). */
export function checkNode(range: string | undefined, version: string = process.versions.node, execPath: string = process.execPath): CheckResult {
  const where = `v${version} at ${execPath}`;
  const needed = range === undefined ? undefined : /^>=\s*(\d+)/.exec(range.trim());
  if (needed === null || needed === undefined) return { name: 'node', mark: 'ok', detail: `${where} (package asks for ${range ?? 'any'})` };
  const major = Number(version.split('.')[0]);
  if (major >= Number(needed[1])) return { name: 'node', mark: 'ok', detail: `${where} (package needs ${range})` };
  return { name: 'node', mark: 'fail', detail: `${where}, but svc needs Node ${range} (the package's own node: node_modules/.bin/node)` };
}

const GPU_NAMES: Record<string, string> = { cuda: 'CUDA', vulkan: 'Vulkan', metal: 'Metal' };

/** The CPU features llama.cpp's binary was built for and this CPU has (`AVX2 = 1` in its system info). */
export function cpuFeatures(systemInfo: string): string[] {
  return [...systemInfo.matchAll(/([A-Z][A-Z0-9_]*)\s*=\s*1\b/g)].map((m) => m[1]!).filter((f) => f !== 'LLAMAFILE' && f !== 'REPACK');
}

/**
 * Which backend node-llama-cpp picks with the daemon's own `--gpu` (llama-engine.ts #binding):
 * the same getLlama options, prebuilt binaries only, never a build or a download. Importing and
 * loading the binding takes about 2 s on a CPU machine (longer where it tries a GPU binary first).
 */
export async function checkLlama(gpu: GpuChoice): Promise<CheckResult> {
  const name = 'llama.cpp';
  try {
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    const llama = await getLlama({ ...llamaBindingOptions(gpu), logLevel: LlamaLogLevel.error, logger: () => {} });
    try {
      const features = cpuFeatures(llama.systemInfo);
      const build = `${llama.buildType} binary, llama.cpp release ${llama.llamaCppRelease.release}`;
      // ggml loads the CPU variant (haswell, zen4, …) that these features allow.
      const cpu = `CPU features ${features.length > 0 ? features.join(' ') : 'none reported'}`;
      if (llama.gpu === false) {
        const why = gpu === 'cpu' ? '--gpu cpu' : 'no CUDA, Vulkan or Metal backend found';
        return { name, mark: 'ok', detail: `CPU (${why}); ${cpu}; ${build}` };
      }
      const devices = await llama.getGpuDeviceNames().catch(() => []);
      const on = devices.length > 0 ? ` on ${devices.join(', ')}` : '';
      return { name, mark: 'ok', detail: `${GPU_NAMES[llama.gpu] ?? llama.gpu}${on}; ${cpu}; ${build}` };
    } finally {
      await llama.dispose();
    }
  } catch (error) {
    return { name, mark: 'fail', detail: `no llama.cpp backend for --gpu ${gpu}: ${errorText(error)}` };
  }
}

/** The root a model was found under (its source's folder), for saying where models are. */
function rootOf(model: LocalModel, roots: readonly string[]): string | undefined {
  return roots.find((root) => model.path === root || model.path.startsWith(root.endsWith(sep) ? root : root + sep));
}

/** The models `svc serve` would find, as `svc models list` reads them without a daemon. */
export async function checkModels(dataDir: string, sources: ReadonlySet<DiscoverableSource>, dataDirExists: boolean): Promise<CheckResult> {
  const name = 'models';
  try {
    // The header index lives in the data dir: no cache (and no folder made) when there is none yet.
    const { models, warnings } = await discoverModels({ dataDir, sources, indexCache: dataDirExists });
    const roots: Record<string, string[]> = { svc: [join(dataDir, 'models')], ...discoveryRoots({}) };
    const bySource = new Map<string, Map<string, number>>();
    for (const model of models) {
      const where = rootOf(model, roots[model.source] ?? []) ?? model.source;
      const places = bySource.get(model.source) ?? new Map<string, number>();
      places.set(where, (places.get(where) ?? 0) + 1);
      bySource.set(model.source, places);
    }
    const notes = [...bySource].flatMap(([source, places]) => [...places].map(([where, count]) => `${source}: ${count} in ${where}`));
    if (warnings.length > 0) notes.push(`${warnings.length} file(s) skipped (svc models list names them)`);
    const searched = ['svc', ...sources].join(', ');
    if (models.length === 0) {
      return { name, mark: 'warn', detail: `none found (searched ${searched}); pull one: svc models pull hf:owner/repo:Q4_K_M`, notes };
    }
    return { name, mark: 'ok', detail: `${models.length} found (searched ${searched})`, notes };
  } catch (error) {
    return { name, mark: 'fail', detail: `discovery failed: ${errorText(error)}` };
  }
}

/** Whether `port` can be bound on `host` now: undefined when it can, else the error's code. */
function bindError(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => { resolve(error.code ?? error.message); });
    server.listen({ port, host, exclusive: true }, () => { server.close(() => { resolve(undefined); }); });
  });
}

/** An svc daemon's /health at `port`, over HTTP or HTTPS (--pqc-transport); a certificate not trusted here still says "svc". */
async function daemonAt(host: string, port: number): Promise<string | undefined> {
  const origin = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  for (const scheme of ['http', 'https']) {
    try {
      if ((await new DaemonClient(`${scheme}://${origin}`).health()) !== undefined) return `${scheme}://${origin}`;
    } catch {
      return `https://${origin} (a certificate this machine does not trust)`;
    }
  }
  return undefined;
}

/** A port `svc serve` would listen on: free, held by an svc daemon (fine), or held by something else. */
export async function checkPort(port: number, host = '127.0.0.1'): Promise<CheckResult> {
  const name = `port ${port}`;
  if (port === 0) return { name, mark: 'ok', detail: 'a free port is picked at start' };
  const error = await bindError(port, host);
  if (error === undefined) return { name, mark: 'ok', detail: `free on ${host}` };
  if (error !== 'EADDRINUSE') return { name, mark: 'fail', detail: `cannot be bound on ${host}: ${error}` };
  const daemon = await daemonAt(host, port);
  if (daemon !== undefined) return { name, mark: 'ok', detail: `held by a running svc daemon (${daemon} answers /health)` };
  return { name, mark: 'fail', detail: `held by another program on ${host} (no svc /health there); svc serve needs it free, or choose one with --port` };
}

/** The nearest folder at or above `path` that exists. */
async function existingAncestor(path: string): Promise<{ path: string; stats: Stats }> {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      return { path: dir, stats: await stat(dir) };
    } catch (error) {
      if (dirname(dir) === dir) throw error;
    }
  }
}

/** The data dir: a writable folder of mode 0700 (private-files.ts), or a place one can be made. */
export async function checkDataDir(dataDir: string, posix: boolean = process.platform !== 'win32'): Promise<CheckResult> {
  const name = 'data dir';
  try {
    const found = await existingAncestor(dataDir);
    if (found.path !== dataDir) {
      if (!found.stats.isDirectory()) return { name, mark: 'fail', detail: `${dataDir} cannot be made: ${found.path} is not a folder` };
      const writable = await access(found.path, constants.W_OK | constants.X_OK).then(() => true, () => false);
      return writable
        ? { name, mark: 'ok', detail: `${dataDir} does not exist yet; svc makes it (mode 0700) on first use` }
        : { name, mark: 'fail', detail: `${dataDir} cannot be made: ${found.path} is not writable` };
    }
    if (!found.stats.isDirectory()) return { name, mark: 'fail', detail: `${dataDir} is not a folder` };
    const writable = await access(dataDir, constants.R_OK | constants.W_OK | constants.X_OK).then(() => true, () => false);
    if (!writable) return { name, mark: 'fail', detail: `${dataDir} is not readable and writable by this user` };
    const mode = found.stats.mode & 0o777;
    if (posix && mode !== PRIVATE_DIR_MODE) {
      return { name, mark: 'warn', detail: `${dataDir} has mode 0${mode.toString(8)}, not 0700: others may read it (svc serve narrows it at start; or chmod 700 it)` };
    }
    return { name, mark: 'ok', detail: `${dataDir}${posix ? ' (mode 0700)' : ''}` };
  } catch (error) {
    return { name, mark: 'fail', detail: `${dataDir}: ${errorText(error)}` };
  }
}

/** A URL as it may be printed: its password replaced (it may be in a terminal's scrollback, or a bug report). */
export function redactedUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = '***';
    return url.href;
  } catch {
    return '(not a URL)';
  }
}

/** Rejects after `ms` with a message naming the wait (the driver's own timeout may not cover every step). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => { reject(new Error(`no answer within ${ms} ms`)); }, ms); });
  return Promise.race([work, timeout]).finally(() => { clearTimeout(timer); });
}

/** `--database-url`: connects and asks the server's version, within `timeoutMs`. */
export async function checkPostgres(url: string, timeoutMs: number): Promise<CheckResult> {
  const name = 'postgresql';
  const shown = redactedUrl(url);
  const { default: pg } = await import('pg');
  let client: InstanceType<typeof pg.Client>;
  try {
    client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  } catch (error) {
    return { name, mark: 'fail', detail: `${shown}: ${errorText(error)}` };
  }
  client.on('error', () => {});
  try {
    const result = await within(timeoutMs + 500, client.connect().then(() => client.query<{ version: string }>('show server_version')));
    const version = (result.rows[0] as { server_version?: string } | undefined)?.server_version ?? 'unknown';
    return { name, mark: 'ok', detail: `${shown} answers (PostgreSQL ${version})` };
  } catch (error) {
    return { name, mark: 'fail', detail: `${shown} unreachable: ${errorText(error)}` };
  } finally {
    await client.end().catch(() => {});
  }
}

/** `--redis-url`: connects and sends PING, within `timeoutMs`, without retrying. */
export async function checkRedis(url: string, timeoutMs: number): Promise<CheckResult> {
  const name = 'redis';
  const shown = redactedUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { name, mark: 'fail', detail: `${shown}: expected redis://host:port or rediss://host:port` };
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return { name, mark: 'fail', detail: `${shown}: expected redis://host:port or rediss://host:port` };
  const { Redis } = await import('ioredis');
  const redis = new Redis(parsed.href, {
    lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs,
    enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null,
  });
  // connect() rejects with "Connection is closed."; the socket's own error (ECONNREFUSED, …) says why.
  let cause: unknown;
  redis.on('error', (error: unknown) => { cause ??= error; });
  try {
    const answer = await within(timeoutMs + 500, redis.connect().then(() => redis.ping()));
    return { name, mark: 'ok', detail: `${shown} answers (${answer})` };
  } catch (error) {
    return { name, mark: 'fail', detail: `${shown} unreachable: ${errorText(cause ?? error)}` };
  } finally {
    redis.disconnect();
  }
}
