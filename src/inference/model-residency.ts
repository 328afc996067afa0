/**
 * Whether one model is in memory, and who may use it: admission of requests (a bounded number
 * running, a bounded number waiting), the load on first use, the keep-alive timer after the
 * last request, and unloads asked for while requests run. What a loaded model is and does is
 * the caller's (`hooks`); choosing which model leaves to make room is the scheduler's
 * (residency-scheduler.ts).
 */
import { AdmissionQueue, QueueFullError } from '../shared/admission-queue.ts';
import { ApiError } from '../shared/api-error.ts';
import type { LlamaEngineOptions } from './llama-engine-options.ts';

/** What `preload` found when its load was done. */
export type LoadOutcome =
  /** In memory; `cancelledUnload`: an unload that was waiting for requests will not happen. */
  | { state: 'loaded'; cancelledUnload: boolean }
  /** Loaded, but an unload asked for while it loaded has taken it out again. */
  | { state: 'unloaded-meanwhile' };

export interface ResidencyHooks<L> {
  /** Brings the model into memory (called once room is made and any earlier unload is done). */
  load(): Promise<L>;
  /** Frees what `load` took. */
  dispose(loaded: L): Promise<void>;
  /**
   * Called synchronously as a load starts, so loads that start together count each other: it
   * throws when there is no room, else resolves once other models have made room.
   */
  makeRoom(residency: ModelResidency<L>): Promise<void>;
}

/** The two queues of a model: generations share `parallel` sequences, embeddings run one at a time. */
export type AdmissionLane = 'generation' | 'embedding';

export type ResidencyOptions = Pick<LlamaEngineOptions, 'parallel' | 'queueSize' | 'keepAliveMs' | 'log'>;

export class ModelResidency<L> {
  readonly id: string;
  readonly #options: ResidencyOptions;
  readonly #hooks: ResidencyHooks<L>;
  readonly #lanes: Record<AdmissionLane, AdmissionQueue>;
  #state: Promise<L> | undefined;
  #loaded = false;
  #active = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #unloading: Promise<void> | undefined;
  /** An unload was asked for while requests ran or waited: done when none is left. */
  #unloadWhenIdle = false;
  /** Unloads asked for so far: a load that sees this change while it ran was overtaken by one. */
  #unloadsAsked = 0;
  /** When a request (or load) last entered, for choosing which idle model makes room. */
  #lastUsed = 0;

  constructor(id: string, options: ResidencyOptions, hooks: ResidencyHooks<L>) {
    this.id = id;
    this.#options = options;
    this.#hooks = hooks;
    this.#lanes = {
      generation: new AdmissionQueue(options.parallel, options.queueSize),
      embedding: new AdmissionQueue(1, options.queueSize),
    };
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  get active(): number {
    return this.#active;
  }

  /** In memory or on its way there: what counts against `maxLoadedModels`. */
  get resident(): boolean {
    return this.#state !== undefined;
  }

  /** Resident with no request running or waiting: may be unloaded to make room. */
  get idle(): boolean {
    return this.#state !== undefined && this.#active === 0 && this.waiting === 0;
  }

  get lastUsed(): number {
    return this.#lastUsed;
  }

  get waiting(): number {
    return this.#lanes.generation.waiting + this.#lanes.embedding.waiting;
  }

  /** Admission, the idle timer and the model load around one unit of work. */
  async withModel<T>(lane: AdmissionLane, signal: AbortSignal | undefined, run: (loaded: L) => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      release = await this.#admit(this.#lanes[lane], signal);
    } catch (error) {
      // The last waiting request gave up (its client left): a pending unload need not wait for it.
      this.#unloadIfPendingAndIdle();
      throw error;
    }
    this.#enter();
    try {
      return await run(await this.#load());
    } finally {
      this.#leave();
      release();
    }
  }

  async #admit(queue: AdmissionQueue, signal: AbortSignal | undefined): Promise<() => void> {
    try {
      return await queue.acquire(signal);
    } catch (error) {
      if (error instanceof QueueFullError) {
        throw ApiError.busy(
          `Model '${this.id}' is busy: ${queue.capacity} requests are running and ${queue.maxWaiting} are waiting. Retry shortly.`,
          1, 503, 'model_overloaded',
        );
      }
      throw error;
    }
  }

  /**
   * Loads the model with no request, then lets the idle timer run as after a request. A load
   * asked for after an unload that is still waiting for requests cancels that unload (and says
   * so); an unload asked for while this load ran wins, and the answer says the model is out.
   */
  async preload(): Promise<LoadOutcome> {
    const cancelledUnload = this.#unloadWhenIdle;
    if (cancelledUnload) {
      this.#unloadWhenIdle = false;
      this.#options.log.info({ model: this.id }, 'a load cancelled the pending unload');
    }
    const asked = this.#unloadsAsked;
    this.#enter();
    try {
      await this.#load();
    } finally {
      this.#leave();
    }
    return this.#unloadsAsked === asked ? { state: 'loaded', cancelledUnload } : { state: 'unloaded-meanwhile' };
  }

  /**
   * Unloads now when no request holds the model or waits for it; otherwise marks it, and it
   * unloads when the last one is done. Requests waiting for admission are served first (they
   * would only load it again), so under steady traffic the unload waits for a pause.
   */
  async unloadWhenIdle(): Promise<'unloaded' | 'pending'> {
    this.#unloadsAsked++;
    if (this.#active > 0 || this.waiting > 0) {
      this.#unloadWhenIdle = true;
      return 'pending';
    }
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    await this.unload();
    return 'unloaded';
  }

  #enter(): void {
    this.#active++;
    this.#lastUsed = performance.now();
    if (this.#idleTimer !== undefined) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
    }
  }

  /** Carries out a pending unload once nothing runs or waits; true when it did. */
  #unloadIfPendingAndIdle(): boolean {
    if (!this.#unloadWhenIdle || this.#active > 0 || this.waiting > 0) return false;
    this.#unloadWhenIdle = false;
    this.unload().catch((error: unknown) => this.#options.log.warn({ model: this.id, err: error }, 'model unload failed'));
    return true;
  }

  #leave(): void {
    this.#active--;
    if (this.#active > 0) return;
    // A pending unload with requests still waiting: they are admitted next, and the last of them unloads.
    if (this.#unloadWhenIdle) {
      this.#unloadIfPendingAndIdle();
      return;
    }
    if (!Number.isFinite(this.#options.keepAliveMs)) return;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#active === 0) {
        this.unload().catch((error: unknown) => this.#options.log.warn({ model: this.id, err: error }, 'model unload failed'));
      }
    }, this.#options.keepAliveMs);
    this.#idleTimer.unref();
  }

  #load(): Promise<L> {
    if (this.#state !== undefined) return this.#state;
    // Synchronous up to here, so loads that start together count each other; it throws the
    // 503 when every model in memory is busy, and otherwise frees idle ones to make room.
    const room = this.#hooks.makeRoom(this);
    this.#state = (async () => {
      await room;
      await this.#unloading;
      const loaded = await this.#hooks.load();
      this.#loaded = true;
      return loaded;
    })().catch((error: unknown) => {
      this.#state = undefined;
      throw new ApiError({
        status: 500, type: 'server_error', code: 'model_load_failed',
        message: `Model '${this.id}' could not be loaded; see the daemon log.`, cause: error,
      });
    });
    return this.#state;
  }

  /**
   * Frees the model's memory. Safe at any time: a load that starts meanwhile waits for the
   * disposal to finish, so two copies of a model are never resident.
   */
  unload(): Promise<void> {
    const state = this.#state;
    if (state === undefined) return this.#unloading ?? Promise.resolve();
    this.#state = undefined;
    this.#loaded = false;
    const unloading = (async () => {
      const loaded = await state.catch(() => undefined);
      if (loaded === undefined) return;
      await this.#hooks.dispose(loaded);
      this.#options.log.info({ model: this.id }, 'model unloaded');
    })().finally(() => {
      if (this.#unloading === unloading) this.#unloading = undefined;
    });
    this.#unloading = unloading;
    return unloading;
  }
}
