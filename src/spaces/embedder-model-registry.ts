import type { ChatMessage, EmbedResult, GenerateResult, LanguageModel, ModelDescriptor, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import type { Embedder } from './space-types.ts';

/**
 * The built-in embedder as a model: `/v1/models` lists it (capabilities `embeddings`, source
 * `builtin`) and `/v1/embeddings` serves it by id, so what a space records as its embedder is
 * something a client can call too. It has no vocabulary and does not generate text.
 */
class EmbedderModel implements LanguageModel {
  readonly id: string;
  readonly #embedder: Embedder;

  constructor(embedder: Embedder) {
    this.id = embedder.id;
    this.#embedder = embedder;
  }

  chat(_messages: readonly ChatMessage[]): Promise<GenerateResult> {
    return Promise.reject(this.#notGenerative());
  }

  complete(): Promise<GenerateResult> {
    return Promise.reject(this.#notGenerative());
  }

  async embed(inputs: readonly (string | readonly number[])[]): Promise<EmbedResult> {
    const texts = inputs.map((input, i) => {
      if (typeof input === 'string') return input;
      throw ApiError.invalidRequest(`input[${i}] is token ids; ${this.id} has no vocabulary and embeds text only.`, 'input', 'unsupported_value');
    });
    const vectors = await this.#embedder.embed(texts, 'document');
    // Whitespace-separated words stand in for tokens: the embedder has no tokenizer to count with.
    const promptTokens = texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
    return { vectors: vectors.map((v) => Array.from(v)), promptTokens };
  }

  #notGenerative(): ApiError {
    return ApiError.invalidRequest(`${this.id} is an embedding model (svc's built-in embedder); it does not generate text. Use it with /v1/embeddings.`, 'model', 'model_not_generative');
  }
}

/**
 * Lists the built-in embedder new spaces get; `earlier` (earlier versions of it, which spaces
 * made with them still use) are served by id but not listed, so a client can still reproduce a
 * space's vectors while the list names only what new work should use.
 */
export class EmbedderModelRegistry implements ModelRegistry {
  readonly #model: EmbedderModel;
  readonly #earlier: Map<string, EmbedderModel>;
  readonly #descriptor: ModelDescriptor;

  constructor(embedder: Embedder, created = Math.floor(Date.now() / 1000), earlier: readonly Embedder[] = []) {
    this.#model = new EmbedderModel(embedder);
    this.#earlier = new Map(earlier.map((e) => [e.id, new EmbedderModel(e)]));
    this.#descriptor = {
      id: embedder.id, created, ownedBy: 'svc', source: 'builtin', architecture: null, parameterCount: 0,
      parameterSize: null, quantization: null, contextLength: null, embeddingLength: embedder.dimensions, capabilities: ['embeddings'],
    };
  }

  list(): ModelDescriptor[] {
    return [this.#descriptor];
  }

  model(id: string): LanguageModel | undefined {
    return id === this.#model.id ? this.#model : this.#earlier.get(id);
  }
}
