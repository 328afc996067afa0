import type { LanguageModel, ModelDescriptor, ModelRegistry } from './language-model.ts';

/**
 * Several registries as one, in priority order: the llama.cpp engine's models first, then
 * upstreams'. An id two registries share is served by the first; the shadowed one is
 * reported once through `onShadowed` (a start-up or refresh warning), not listed twice.
 */
export class MergedModelRegistry implements ModelRegistry {
  readonly #registries: readonly ModelRegistry[];
  readonly #onShadowed: (id: string, owners: string[]) => void;
  readonly #reported = new Set<string>();

  constructor(registries: readonly ModelRegistry[], onShadowed: (id: string, owners: string[]) => void = () => {}) {
    this.#registries = registries;
    this.#onShadowed = onShadowed;
  }

  list(): ModelDescriptor[] {
    const seen = new Map<string, ModelDescriptor>();
    for (const registry of this.#registries) {
      for (const model of registry.list()) {
        const first = seen.get(model.id);
        if (first === undefined) {
          seen.set(model.id, model);
        } else if (!this.#reported.has(model.id)) {
          this.#reported.add(model.id);
          this.#onShadowed(model.id, [first.ownedBy, model.ownedBy]);
        }
      }
    }
    return [...seen.values()];
  }

  model(id: string): LanguageModel | undefined {
    for (const registry of this.#registries) {
      const model = registry.model(id);
      if (model !== undefined) return model;
    }
    return undefined;
  }
}
