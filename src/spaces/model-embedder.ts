import type { LanguageModel } from '../inference/language-model.ts';
import { l2Normalize } from '../inference/l2-normalize.ts';
import type { Embedder } from './space-types.ts';

/** How many texts go to the model in one call: enough to batch, few enough to let other requests in between. */
const BATCH = 32;

/**
 * A GGUF embedding model (or a local upstream's: a remote one is refused in spaces-runtime.ts)
 * as a space's embedder (`--spaces-embedder <id>`).
 * Vectors are normalized here whatever the model does, so similarity is always a dot product.
 * Query and document texts are embedded alike: models that want prefixes ("query: ") get them
 * from the caller's text, as their model cards say.
 */
export class ModelEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly #model: LanguageModel;

  constructor(model: LanguageModel, dimensions: number) {
    this.id = model.id;
    this.dimensions = dimensions;
    this.#model = model;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const { vectors } = await this.#model.embed(texts.slice(i, i + BATCH));
      for (const vector of vectors) {
        if (vector.length !== this.dimensions) throw new Error(`embedding model ${this.id} returned ${vector.length} dimensions, expected ${this.dimensions}`);
        out.push(Float32Array.from(l2Normalize(vector)));
      }
    }
    return out;
  }
}
