import type { FastifyInstance } from 'fastify';
import type { ModelDescriptor, ModelRegistry } from '../inference/language-model.ts';
import { modelNotFound } from '../openai/model-lookup.ts';

/**
 * OpenAI's model object plus what local tools show about a model. Names follow LM Studio's
 * `/api/v0/models` (`arch`, `quantization`, `max_context_length`, `state`) and Ollama's
 * `/api/show` (`parameter_size`, `capabilities`) so their users find them where they expect;
 * OpenAI clients ignore the extra fields. Unknown values are null, never missing.
 */
export function toOpenAIModel(m: ModelDescriptor, loaded: ReadonlySet<string>, memoryBytes?: ((id: string) => number | null) | undefined) {
  return {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: m.ownedBy,
    source: m.source ?? null,
    path: m.path ?? null,
    size_bytes: m.sizeBytes ?? null,
    arch: m.architecture ?? null,
    parameter_count: m.parameterCount ?? null,
    parameter_size: m.parameterSize ?? null,
    quantization: m.quantization ?? null,
    max_context_length: m.contextLength ?? null,
    embedding_length: m.embeddingLength ?? null,
    capabilities: m.capabilities ?? [],
    state: loaded.has(m.id) ? 'loaded' : 'not-loaded',
    // What a loaded model holds in memory, where the engine knows it (GGUF models it loaded).
    memory_bytes: loaded.has(m.id) ? memoryBytes?.(m.id) ?? null : null,
    // Where it runs: `remote` models never receive local-context data (MCP tools, privacy rule).
    plane: m.plane ?? 'local',
  };
}

export async function modelsRoutes(app: FastifyInstance, options: { models: ModelRegistry; loadedModels?: (() => readonly string[]) | undefined; memoryBytes?: ((id: string) => number | null) | undefined }): Promise<void> {
  const loaded = (): ReadonlySet<string> => new Set(options.loadedModels?.() ?? []);

  app.get('/models', async () => {
    const now = loaded();
    return { object: 'list', data: options.models.list().map((m) => toOpenAIModel(m, now, options.memoryBytes)) };
  });

  // Ids may contain slashes and colons (`hf:owner/repo/file`, `namespace/model:tag`), so match
  // the rest of the path. Fastify has already percent-decoded it (`%2F` and `%3A` included).
  app.get<{ Params: { '*': string } }>('/models/*', async (request) => {
    const id = request.params['*'];
    const model = options.models.list().find((m) => m.id === id);
    if (model === undefined) throw modelNotFound(options.models, id);
    return toOpenAIModel(model, loaded(), options.memoryBytes);
  });
}
