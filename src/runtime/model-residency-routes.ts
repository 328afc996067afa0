import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ModelRegistry } from '../inference/language-model.ts';
import type { LoadOutcome } from '../inference/model-residency.ts';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { MAX_MODEL_ID_LENGTH, modelNotFound } from '../openai/model-lookup.ts';
import { toOpenAIModel } from './models-routes.ts';

/** What loads and unloads models: the llama.cpp engine (src/inference/llama-engine.ts). */
export interface ModelResidency {
  /** Whether the id is one of its GGUF models; upstream and built-in models are not. */
  holds(id: string): boolean;
  /** May throw the engine's 503 `model_capacity_reached` (--max-loaded-models) or 500 `model_load_failed`. */
  loadModel(id: string): Promise<LoadOutcome>;
  /** `pending`: requests are running on the model; it unloads when the last one ends. */
  unloadModel(id: string): Promise<'unloaded' | 'pending'>;
  loadedModels(): readonly string[];
  /** Bytes a loaded model holds (`memory_bytes`); null when not loaded. */
  memoryBytes?(id: string): number | null;
}

/** Model ids are at most a path and a tag long; a longer one names no model. */
export const modelResidencyBodySchema = z.strictObject({ model: z.string().min(1).max(MAX_MODEL_ID_LENGTH) });

/**
 * `{"model": id}` is under 3 KB: a larger body is refused (413) as it arrives, instead of being
 * read, parsed and cloned back to the event loop for nothing (a 1.7 MB one held it 55 ms).
 */
const RESIDENCY_BODY_LIMIT = 64 * 1024;

/**
 * `POST /api/models/load` and `POST /api/models/unload` with `{"model": "<id>"}`: what Ollama
 * does with an empty `/api/generate` request and with `keep_alive: 0`, as two plain endpoints
 * (LM Studio's shape). A loaded model stays for the daemon's `--keep-alive` idle time, as after
 * a request. Both answer the model object of `/v1/models/{id}`; an unload that has to wait for
 * running or queued requests answers 202 with `state: "unloading"`. A load answers what it
 * found when done: `loaded` (with `unload_cancelled: true` when it called off a pending
 * unload), or 409 `model_unloaded_meanwhile` when an unload asked for while it loaded won.
 */
export async function modelResidencyRoutes(app: FastifyInstance, options: { models: ModelRegistry; residency: ModelResidency }): Promise<void> {
  const { models, residency } = options;
  const target = (body: unknown) => {
    const { model: id } = parseWithSchema(modelResidencyBodySchema, body ?? undefined);
    const descriptor = models.list().find((m) => m.id === id);
    if (descriptor === undefined) throw modelNotFound(models, id);
    if (!residency.holds(id)) {
      const why = descriptor.source === 'builtin' ? 'is built in and always in memory' : `is served by the upstream ${quoteInput(descriptor.ownedBy)}`;
      throw new ApiError({ status: 400, type: 'invalid_request_error', code: 'model_not_loadable', param: 'model', message: `The model ${quoteInput(id)} ${why}: there is nothing to load or unload.` });
    }
    return descriptor;
  };
  const loaded = () => new Set(residency.loadedModels());
  const memory = (id: string) => residency.memoryBytes?.(id) ?? null;

  app.post('/models/load', { bodyLimit: RESIDENCY_BODY_LIMIT }, async (request) => {
    const descriptor = target(request.body);
    const outcome = await residency.loadModel(descriptor.id);
    if (outcome.state === 'unloaded-meanwhile') {
      throw new ApiError({
        status: 409, type: 'invalid_request_error', code: 'model_unloaded_meanwhile', param: 'model',
        message: `The model ${quoteInput(descriptor.id)} loaded, but an unload asked for while it was loading has taken it out of memory again. Send the load again to keep it.`,
      });
    }
    // The state the load found, not a second look: with --keep-alive 0 the model leaves again at once.
    return { ...toOpenAIModel(descriptor, loaded(), memory), state: 'loaded', ...(outcome.cancelledUnload ? { unload_cancelled: true } : {}) };
  });

  app.post('/models/unload', { bodyLimit: RESIDENCY_BODY_LIMIT }, async (request, reply) => {
    const descriptor = target(request.body);
    const outcome = await residency.unloadModel(descriptor.id);
    if (outcome === 'pending') return reply.code(202).send({ ...toOpenAIModel(descriptor, loaded(), memory), state: 'unloading' });
    return toOpenAIModel(descriptor, loaded(), memory);
  });
}
