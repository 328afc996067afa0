import type { EmbedResult, LanguageModel, ModelDescriptor, ModelRegistry } from '../inference/language-model.ts';
import { HASHED_EMBEDDER_DIMENSIONS, HashedEmbedder, hashedEmbedderVersion, type HashedEmbedderVersion } from './hashed-embedder.ts';
import type { OffThread } from '../shared/off-thread.ts';

const MODULE = new URL(import.meta.url);

/** Texts up to this many characters in all are embedded on the event loop (about 1 ms of hashing). */
const INLINE_EMBED_CHARS = 16 * 1024;

/**
 * `/v1/embeddings` for svc's built-in hashed embedders, computed on the intake worker.
 *
 * The built-in embedder is JavaScript with no context to bound its input: a 16 MB request (one
 * text, or 2,048 texts of 8 KB) held the event loop 550–810 ms while it hashed every word
 * (measured on the 2-core machine). llama.cpp models embed natively and off the loop already,
 * and their context bounds the work; this gives the built-in ones the same property. The
 * vectors come back as one Float32Array, transferred, not copied.
 */
export class OffThreadEmbeddingRegistry implements ModelRegistry {
  readonly #inner: ModelRegistry;
  readonly #offThread: OffThread;
  readonly #wrapped = new Map<LanguageModel, LanguageModel>();

  constructor(inner: ModelRegistry, offThread: OffThread) {
    this.#inner = inner;
    this.#offThread = offThread;
  }

  list(): ModelDescriptor[] {
    return this.#inner.list();
  }

  model(id: string): LanguageModel | undefined {
    const model = this.#inner.model(id);
    const version = hashedEmbedderVersion(id);
    if (model === undefined || version === undefined) return model;
    let wrapped = this.#wrapped.get(model);
    if (wrapped === undefined) {
      wrapped = withEmbed(model, (inputs) => this.#embed(model, version, inputs));
      this.#wrapped.set(model, wrapped);
    }
    return wrapped;
  }

  async #embed(model: LanguageModel, version: HashedEmbedderVersion, inputs: readonly (string | readonly number[])[]): Promise<EmbedResult> {
    // Token ids are refused by the model itself (it has no vocabulary): nothing to compute. Small
    // texts are embedded here, in well under a millisecond, without waiting behind large bodies.
    if (!inputs.every((input) => typeof input === 'string')) return model.embed(inputs);
    let chars = 0;
    for (const input of inputs) chars += input.length;
    if (chars <= INLINE_EMBED_CHARS) return model.embed(inputs);
    const { vectors, dimensions, promptTokens } = await this.#offThread.run<OffThreadEmbedding>(MODULE, 'embedWithHashedEmbedder', [version, inputs]);
    return { vectors: Array.from({ length: inputs.length }, (_, i) => Array.from(vectors.subarray(i * dimensions, (i + 1) * dimensions))), promptTokens };
  }
}

/** The model as it is, but for `embed`; its own methods still run with itself as `this`. */
function withEmbed(model: LanguageModel, embed: LanguageModel['embed']): LanguageModel {
  return new Proxy(model, {
    get(target, property) {
      if (property === 'embed') return embed;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface OffThreadEmbedding {
  vectors: Float32Array;
  dimensions: number;
  promptTokens: number;
}

let embedders: Map<HashedEmbedderVersion, HashedEmbedder> | undefined;

/** On the intake worker: the texts' vectors, one after another in one array, and their word count. */
export async function embedWithHashedEmbedder(version: HashedEmbedderVersion, texts: string[]): Promise<OffThreadEmbedding> {
  embedders ??= new Map();
  let embedder = embedders.get(version);
  if (embedder === undefined) {
    embedder = new HashedEmbedder({ version, dimensions: HASHED_EMBEDDER_DIMENSIONS });
    embedders.set(version, embedder);
  }
  const vectors = await embedder.embed(texts, 'document');
  const out = new Float32Array(texts.length * embedder.dimensions);
  vectors.forEach((v, i) => out.set(v, i * embedder.dimensions));
  // As the built-in model counts them: whitespace-separated words stand in for tokens.
  const promptTokens = texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
  return { vectors: out, dimensions: embedder.dimensions, promptTokens };
}
