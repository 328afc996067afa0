/**
 * The embedded llama.cpp engine as the HTTP layer sees it: the catalog's GGUF models, each
 * served by a model host (llama-model-host.ts) whose residency the scheduler weighs against the
 * others' (residency-scheduler.ts), over one llama.cpp binding loaded on first use.
 */
import type { Llama } from 'node-llama-cpp';
import type { LanguageModel, ModelDescriptor, ModelRegistry } from './language-model.ts';
import { llamaBindingOptions, type LlamaEngineOptions } from './llama-engine-options.ts';
import { LlamaModelHost } from './llama-model-host.ts';
import type { CatalogModel, ModelCatalog } from './model-catalog.ts';
import type { LoadOutcome } from './model-residency.ts';
import { ResidencyScheduler } from './residency-scheduler.ts';

/**
 * Owns the llama.cpp binding and one host per model. The binding loads lazily on the first
 * request (never at start-up, so `svc serve` starts instantly and without a model).
 */
export class LlamaEngine implements ModelRegistry {
  readonly #options: LlamaEngineOptions;
  readonly #catalog: ModelCatalog;
  readonly #hosts = new Map<string, LlamaModelHost>();
  readonly #scheduler: ResidencyScheduler;
  #llama: Promise<Llama> | undefined;

  constructor(catalog: ModelCatalog, options: LlamaEngineOptions) {
    this.#catalog = catalog;
    this.#options = options;
    this.#scheduler = new ResidencyScheduler(options.maxLoadedModels, options.log);
  }

  list(): ModelDescriptor[] {
    return this.#catalog.list();
  }

  /** The model with this id, or undefined when no such model is configured. */
  model(id: string): LanguageModel | undefined {
    return this.#host(id);
  }

  #host(id: string): LlamaModelHost | undefined {
    const existing = this.#hosts.get(id);
    if (existing !== undefined) return existing;
    const descriptor = this.#catalog.get(id);
    if (descriptor === undefined) return undefined;
    const host = new LlamaModelHost(id, descriptor.path, () => this.#binding(), this.#options, (residency) => this.#scheduler.makeRoom(residency));
    this.#hosts.set(id, host);
    this.#scheduler.add(host.residency);
    return host;
  }

  /**
   * Imports node-llama-cpp and loads the llama.cpp binding now, in the background, so the
   * first request does not pay for it (module evaluation is synchronous JavaScript work).
   */
  warmUp(): Promise<void> {
    return this.#binding().then(
      () => undefined,
      (error: unknown) => this.#options.log.warn({ err: error }, 'llama.cpp binding failed to load; inference requests will fail'),
    );
  }

  /** Whether `id` is one of this engine's GGUF models (upstream and built-in models are not). */
  holds(id: string): boolean {
    return this.#hosts.has(id) || this.#catalog.get(id) !== undefined;
  }

  /**
   * Loads a model now, as its first request would, then keeps it for the keep-alive idle time
   * (`POST /api/models/load`). Undefined `id`s are the caller's 404: check `holds` first.
   */
  async loadModel(id: string): Promise<LoadOutcome> {
    const host = this.#host(id);
    // A programming error, not a client's: the route answers 404 for ids `holds` does not know.
    if (host === undefined) throw new RangeError(`loadModel: '${id}' is not one of this engine's models`);
    return host.residency.preload();
  }

  /**
   * Unloads a model (`POST /api/models/unload`): at once when no request is running on it,
   * else when the last running one ends (`pending`), so no generation loses its context.
   */
  async unloadModel(id: string): Promise<'unloaded' | 'pending'> {
    const host = this.#hosts.get(id);
    return host === undefined ? 'unloaded' : host.residency.unloadWhenIdle();
  }

  /** The catalog entry of one of this engine's models: where its file is and which store it came from. */
  localModel(id: string): CatalogModel | undefined {
    return this.#catalog.get(id);
  }

  /** Whether a model is in memory, on its way there, or has requests running or waiting on it. */
  inUse(id: string): boolean {
    const residency = this.#hosts.get(id)?.residency;
    return residency !== undefined && (residency.resident || residency.active > 0 || residency.waiting > 0);
  }

  /**
   * Reads the model folders again (after a pull or a delete through the API). Hosts of models
   * that are gone and not in use are dropped, so a later request answers 404, not a failed load.
   */
  async refreshModels(): Promise<void> {
    await this.#catalog.refresh();
    for (const [id, host] of this.#hosts) {
      if (this.#catalog.get(id) === undefined && !this.inUse(id)) {
        this.#hosts.delete(id);
        this.#scheduler.remove(host.residency);
      }
    }
  }

  /** Ids of models currently resident in memory. */
  loadedModels(): string[] {
    return this.#scheduler.loadedModels();
  }

  /** Bytes a loaded model holds (weights, context, draft); null when it is not loaded here. */
  memoryBytes(id: string): number | null {
    return this.#hosts.get(id)?.memoryBytes ?? null;
  }

  /** Active and waiting requests across all models (for health and shutdown). */
  load(): { active: number; waiting: number } {
    return this.#scheduler.load();
  }

  #binding(): Promise<Llama> {
    // node-llama-cpp takes ~0.7 s to import; a daemon without models, `svc --help` and every
    // other command should not pay for it, so it loads with the first inference request.
    this.#llama ??= import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) => getLlama({
      ...llamaBindingOptions(this.#options.gpu),
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => {
        const text = message.trim();
        if (text !== '') this.#options.log.debug({ llamaLevel: level }, `llama.cpp: ${text}`);
      },
      ...(this.#options.threads !== undefined ? { maxThreads: this.#options.threads } : {}),
    })).catch((error: unknown) => {
      this.#llama = undefined;
      throw error;
    });
    return this.#llama;
  }

  async close(): Promise<void> {
    await this.#scheduler.unloadAll();
    if (this.#llama !== undefined) {
      const llama = await this.#llama.catch(() => undefined);
      await llama?.dispose();
      this.#llama = undefined;
    }
  }
}
