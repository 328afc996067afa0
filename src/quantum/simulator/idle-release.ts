/**
 * Calls `release` once `ms` pass with no touch(): how the simulator lets go of large per-thread
 * buffers (the scratch state, the WebAssembly arena and its instance) after a quiet spell. The
 * timer is unref'd, so it never keeps a process alive; `release` should call cancel().
 */
/** How long the simulator keeps its per-thread buffers after their last use, ms. */
export const SIMULATOR_IDLE_RELEASE_MS = 20_000;

export class IdleRelease {
  readonly #ms: number;
  readonly #release: () => void;
  #timer: NodeJS.Timeout | null = null;

  constructor(ms: number, release: () => void) {
    this.#ms = ms;
    this.#release = release;
  }

  touch(): void {
    if (this.#timer) this.#timer.refresh();
    else {
      this.#timer = setTimeout(this.#release, this.#ms);
      this.#timer.unref();
    }
  }

  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
