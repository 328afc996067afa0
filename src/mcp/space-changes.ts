/**
 * Tells every connected MCP client that the list of space documents changed
 * (`notifications/resources/list_changed`). Additions are coalesced for a moment, so an upload of
 * a hundred files, or a tool call that the HTTP hook also sees, is one notification, not many.
 */
const COALESCE_MS = 50;

export class SpaceChanges {
  readonly #listeners = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;

  /** Calls `listener` after documents were added; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Documents were added, replaced or deleted. */
  changed(): void {
    if (this.#timer !== undefined || this.#listeners.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const listener of [...this.#listeners]) listener();
    }, COALESCE_MS);
    this.#timer.unref();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#listeners.clear();
  }
}
