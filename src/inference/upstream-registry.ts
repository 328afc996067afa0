import type { Socket } from 'node:net';
import type { LanguageModel, ModelDescriptor, ModelRegistry } from './language-model.ts';
import { OpenAIUpstream, type UpstreamModelInfo, type UpstreamOptions } from './openai-upstream.ts';

/**
 * The models of every configured upstream, listed as `<upstream>/<upstream's id>` and owned
 * by the upstream's name. An upstream's models are the configured list, or what its
 * `GET /v1/models` says (discovery), or both.
 *
 * Discovered lists are refreshed on demand, never in the background (an idle daemon opens no
 * connection): when the model list is read and the last refresh is older than
 * `refreshIntervalMs` (the answer uses the list at hand; the refresh serves the next one),
 * and when a request names an id under a discovering upstream that the list lacks. Such a
 * request is still sent to the upstream, which decides: a model pulled into Ollama a moment
 * ago works at once, an unknown one is the upstream's 404.
 */
export interface UpstreamSpec extends UpstreamOptions {
  /** Models to list without asking the upstream. */
  models?: readonly string[] | undefined;
  /** Ask the upstream's `GET /v1/models`. */
  discover: boolean;
}

export interface UpstreamLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface UpstreamRegistryOptions {
  log: UpstreamLogger;
  /** Age after which a discovered list is refreshed when read (default 30 s). */
  refreshIntervalMs?: number;
  /** Wait after a failed discovery before trying again (default 5 s). */
  retryIntervalMs?: number;
  /** Told of each socket opened to a `remote` upstream (the daemon counts them as outbound). */
  onRemoteSocket?: ((socket: Socket) => void) | undefined;
}

interface Entry {
  upstream: OpenAIUpstream;
  spec: UpstreamSpec;
  /** Upstream id → info; configured models first. */
  models: Map<string, UpstreamModelInfo>;
  /** performance.now() of the last discovery attempt and whether it succeeded. */
  lastAttempt: number;
  lastOk: boolean;
  /** Discoveries that failed in a row (only the first is a warning). */
  failures: number;
  refreshing: Promise<void> | undefined;
  /** Unix seconds at start, the `created` of models whose upstream does not say. */
  since: number;
}

const DEFAULT_REFRESH_MS = 30_000;
const DEFAULT_RETRY_MS = 5_000;

export class UpstreamRegistry implements ModelRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #log: UpstreamLogger;
  readonly #refreshMs: number;
  readonly #retryMs: number;

  constructor(specs: readonly UpstreamSpec[], options: UpstreamRegistryOptions) {
    this.#log = options.log;
    this.#refreshMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_MS;
    this.#retryMs = options.retryIntervalMs ?? DEFAULT_RETRY_MS;
    const since = Math.floor(Date.now() / 1000);
    for (const spec of specs) {
      if (this.#entries.has(spec.name)) throw new Error(`Two upstreams are named '${spec.name}'.`);
      const models = new Map<string, UpstreamModelInfo>((spec.models ?? []).map((id) => [id, { id }]));
      this.#entries.set(spec.name, {
        upstream: new OpenAIUpstream({ ...spec, onSocket: spec.kind === 'remote' ? options.onRemoteSocket : undefined }), spec, models,
        lastAttempt: Number.NEGATIVE_INFINITY, lastOk: false, failures: 0, refreshing: undefined, since,
      });
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Discovers every discovering upstream's models, waiting at most `maxWaitMs` (so a slow or
   * absent upstream does not hold up the daemon's start; its discovery finishes later).
   */
  async start(maxWaitMs: number): Promise<void> {
    const all = Promise.all([...this.#entries.values()].filter((e) => e.spec.discover).map((e) => this.#refresh(e)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => { timer = setTimeout(resolve, maxWaitMs); })]);
    clearTimeout(timer);
  }

  /** Refreshes every discovering upstream's list now. */
  async refresh(): Promise<void> {
    await Promise.all([...this.#entries.values()].filter((e) => e.spec.discover).map((e) => this.#refresh(e)));
  }

  list(): ModelDescriptor[] {
    const out: ModelDescriptor[] = [];
    for (const entry of this.#entries.values()) {
      this.#refreshIfStale(entry);
      for (const info of entry.models.values()) {
        out.push({ id: `${entry.spec.name}/${info.id}`, created: info.created ?? entry.since, ownedBy: entry.spec.name, plane: entry.spec.kind });
      }
    }
    return out;
  }

  model(id: string): LanguageModel | undefined {
    const slash = id.indexOf('/');
    if (slash <= 0) return undefined;
    const entry = this.#entries.get(id.slice(0, slash));
    const upstreamId = id.slice(slash + 1);
    if (entry === undefined || upstreamId === '') return undefined;
    if (!entry.models.has(upstreamId)) {
      if (!entry.spec.discover) return undefined;
      this.#refreshIfStale(entry, true);
    }
    return entry.upstream.model(upstreamId, id);
  }

  /** Open connections to `remote` upstreams: what the daemon has open off this machine. */
  outboundConnections(): number {
    let n = 0;
    for (const entry of this.#entries.values()) if (entry.upstream.kind === 'remote') n += entry.upstream.connections;
    return n;
  }

  /** For `/health`: each upstream's name, kind, base URL, reachability and load — never a key or header. */
  health(): (ReturnType<OpenAIUpstream['describe']> & { models: number })[] {
    return [...this.#entries.values()].map((e) => ({ ...e.upstream.describe(), models: e.models.size }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.upstream.close()));
  }

  #refreshIfStale(entry: Entry, miss = false): void {
    if (!entry.spec.discover || entry.refreshing !== undefined) return;
    const age = performance.now() - entry.lastAttempt;
    // A miss refreshes sooner than age alone would, but not on every request for a bad id.
    const due = entry.lastOk ? (miss ? this.#retryMs : this.#refreshMs) : this.#retryMs;
    if (age >= due) void this.#refresh(entry);
  }

  #refresh(entry: Entry): Promise<void> {
    if (entry.refreshing !== undefined) return entry.refreshing;
    entry.lastAttempt = performance.now();
    entry.refreshing = (async () => {
      try {
        const discovered = await entry.upstream.listModels();
        const before = new Set(entry.models.keys());
        const models = new Map<string, UpstreamModelInfo>((entry.spec.models ?? []).map((id) => [id, { id }]));
        for (const info of discovered) if (!models.has(info.id)) models.set(info.id, info);
        entry.models = models;
        const added = [...models.keys()].filter((id) => !before.has(id));
        if (!entry.lastOk || added.length > 0) {
          this.#log.info({ upstream: entry.spec.name, models: [...models.keys()].map((id) => `${entry.spec.name}/${id}`) }, `upstream '${entry.spec.name}': ${models.size} models`);
        }
        entry.lastOk = true;
        entry.failures = 0;
      } catch (error) {
        // A warning when the upstream starts failing, not on every retry after that.
        const level = entry.failures === 0 ? 'warn' : 'debug';
        entry.failures++;
        this.#log[level]({ upstream: entry.spec.name, code: (error as { code?: unknown }).code }, `upstream '${entry.spec.name}': cannot list its models: ${(error as Error).message}`);
        entry.lastOk = false;
      } finally {
        entry.refreshing = undefined;
      }
    })();
    return entry.refreshing;
  }
}
