/**
 * Which models share memory: at most `maxLoadedModels` in memory (or loading) at once, the
 * least recently used idle ones unloaded to make room for another, and a load refused (503)
 * when every one in memory is busy, as Ollama's scheduler does. Each model's own load, unload
 * and keep-alive is its residency's (model-residency.ts).
 */
import { ApiError } from '../shared/api-error.ts';
import { DEFAULT_MAX_LOADED_MODELS } from './default-max-loaded-models.ts';
import type { EngineLogger } from './llama-engine-options.ts';

/** What the scheduler reads of a model's residency. */
export interface ResidentModel {
  readonly id: string;
  /** Loaded and ready. */
  readonly loaded: boolean;
  /** In memory or on its way there. */
  readonly resident: boolean;
  /** Resident with no request running or waiting. */
  readonly idle: boolean;
  /** When a request or load last entered (performance.now()). */
  readonly lastUsed: number;
  readonly active: number;
  readonly waiting: number;
  unload(): Promise<void>;
}

export class ResidencyScheduler {
  readonly #maxLoadedModels: number;
  readonly #log: EngineLogger;
  /** Every model that may load, in the order first asked for. */
  readonly #models = new Set<ResidentModel>();

  constructor(maxLoadedModels: number | undefined, log: EngineLogger) {
    this.#maxLoadedModels = maxLoadedModels ?? DEFAULT_MAX_LOADED_MODELS;
    this.#log = log;
  }

  add(model: ResidentModel): void {
    this.#models.add(model);
  }

  /** A model whose file was deleted (it is not resident: the caller checked). */
  remove(model: ResidentModel): void {
    this.#models.delete(model);
  }

  /**
   * Called synchronously as `incoming` starts loading, so that concurrent loads count each other:
   * with `maxLoadedModels` already in memory (or loading), the least recently used idle ones
   * are unloaded to make room (the returned promise: their memory is freed), and when too few
   * are idle the load is refused with 503 `model_capacity_reached` rather than exhausting memory.
   */
  makeRoom(incoming: ResidentModel): Promise<void> {
    const max = this.#maxLoadedModels;
    const resident = [...this.#models].filter((m) => m !== incoming && m.resident);
    const excess = resident.length + 1 - max;
    if (excess <= 0) return Promise.resolve();
    const idle = resident.filter((m) => m.idle).sort((a, b) => a.lastUsed - b.lastUsed);
    if (idle.length < excess) {
      throw ApiError.busy(
        `Model '${incoming.id}' cannot be loaded now: ${resident.length} models are in memory (--max-loaded-models ${max}) and all of them are serving requests. Retry when one is idle, or unload one (POST /api/models/unload).`,
        5, 503, 'model_capacity_reached',
      );
    }
    const evicted = idle.slice(0, excess);
    this.#log.info({ model: incoming.id, unloading: evicted.map((m) => m.id), maxLoadedModels: max }, 'unloading idle models to make room');
    return Promise.all(evicted.map((m) => m.unload())).then(() => undefined);
  }

  /** Ids of models currently loaded. */
  loadedModels(): string[] {
    return [...this.#models].filter((m) => m.loaded).map((m) => m.id);
  }

  /** Active and waiting requests across all models (for health and shutdown). */
  load(): { active: number; waiting: number } {
    let active = 0;
    let waiting = 0;
    for (const m of this.#models) {
      active += m.active;
      waiting += m.waiting;
    }
    return { active, waiting };
  }

  unloadAll(): Promise<void> {
    return Promise.all([...this.#models].map((m) => m.unload())).then(() => undefined);
  }
}
