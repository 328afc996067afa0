import type { EmbedResult, LanguageModel, ModelDescriptor, ModelRegistry } from '../inference/language-model.ts';
import { HASHED_EMBEDDER_DIMENSIONS, HashedEmbedder, hashedEmbedderVersion, type HashedEmbedderVersion } from './hashed-embedder.ts';
import { ApiError } from '../shared/api-error.ts';
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

/** On the worker: the built-in embedders it has made, by version and dimensions. */
const workerEmbedders = new Map<number, HashedEmbedder>();

/** On the worker: the texts' document vectors, one after another in one array. */
function embedOnWorker(version: HashedEmbedderVersion, dimensions: number, texts: readonly string[]): Float32Array {
  const key = version * 65536 + dimensions;
  let embedder = workerEmbedders.get(key);
  if (embedder === undefined) {
    embedder = new HashedEmbedder({ version, dimensions });
    workerEmbedders.set(key, embedder);
  }
  const out = new Float32Array(texts.length * dimensions);
  for (const [i, text] of texts.entries()) out.set(embedder.embedText(text), i * dimensions);
  return out;
}

/** On the intake worker: the texts' vectors, one after another in one array, and their word count. */
export async function embedWithHashedEmbedder(version: HashedEmbedderVersion, texts: string[]): Promise<OffThreadEmbedding> {
  const vectors = embedOnWorker(version, HASHED_EMBEDDER_DIMENSIONS, texts);
  // As the built-in model counts them: whitespace-separated words stand in for tokens.
  const promptTokens = texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
  return { vectors, dimensions: HASHED_EMBEDDER_DIMENSIONS, promptTokens };
}

/**
 * The built-in embedder for a space library, hashing document batches on a worker thread.
 *
 * Bulk ingest is one thread's work otherwise: embedding took about a quarter of its CPU
 * (docs/BENCHMARKS.md, "Knowledge spaces"), and the SQLite writes, which must stay on the
 * event loop, the rest. With the hashing here, addDocuments (space-ingest.ts) embeds the next
 * group while it writes the current one, so a second core does a quarter of the work. Queries
 * and small batches stay inline: a thread hop costs more than hashing a few words. The vectors
 * are the same bits either way (the same code, the same version and dimensions).
 *
 * A worker that refuses work (its queue full, or closing) is not an error here: the batch is
 * hashed inline, as it was before.
 */
export class OffThreadHashedEmbedder extends HashedEmbedder {
  readonly #offThread: OffThread;

  constructor(options: { dimensions?: number; version?: HashedEmbedderVersion }, offThread: OffThread) {
    super(options);
    this.#offThread = offThread;
  }

  override async embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]> {
    let chars = 0;
    for (const text of texts) chars += text.length;
    if (purpose !== 'document' || chars <= INLINE_EMBED_CHARS) return super.embed(texts, purpose);
    let vectors: Float32Array;
    try {
      vectors = await this.#offThread.run<Float32Array>(MODULE, 'embedDocumentsWithHashedEmbedder', [this.version, this.dimensions, texts]);
    } catch (error) {
      if (error instanceof ApiError && error.status === 503) return super.embed(texts, purpose);
      throw error;
    }
    const d = this.dimensions;
    return Array.from({ length: texts.length }, (_, i) => vectors.subarray(i * d, (i + 1) * d));
  }
}

/** On the spaces' embedding thread: a batch's document vectors, one after another in one array. */
export async function embedDocumentsWithHashedEmbedder(version: HashedEmbedderVersion, dimensions: number, texts: string[]): Promise<Float32Array> {
  return embedOnWorker(version, dimensions, texts);
}
