import type { LanguageModel, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';

/** 404 `model_not_found` that says which models there are, or how to add one. */
export function modelNotFound(registry: ModelRegistry, id: string): ApiError {
  const models = registry.list();
  const available = models.map((m) => m.id);
  // Built-in models (the spaces embedder) are always there; they do not make a daemon "configured".
  const builtin = models.filter((m) => m.source === 'builtin').map((m) => m.id);
  const hint = available.length > builtin.length
    ? `Available models: ${available.join(', ')}.`
    : `No model is configured: start the daemon with \`svc serve --model /path/to/model.gguf\`, or put a .gguf file in the data directory's models/ folder (models in Ollama's store, the Hugging Face cache and LM Studio's folder are found too unless --discover turns that off).${builtin.length > 0 ? ` Built in: ${builtin.join(', ')} (embeddings only).` : ''}`;
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model ${quoteInput(id)} does not exist. ${hint}`,
  });
}

/**
 * Model ids are at most a path and a tag long. A longer one names no model and is not looked
 * up: each registry's lookup (prefix splits, catalog matching) costs in proportion to the id,
 * and a request may carry a 16 MB one (20 ms on the event loop in bench:reliability).
 */
export const MAX_MODEL_ID_LENGTH = 2048;

/** The model named in a request, or the 404 above. */
export function lookupModel(registry: ModelRegistry, id: string): LanguageModel {
  const model = id.length > MAX_MODEL_ID_LENGTH ? undefined : registry.model(id);
  if (model === undefined) throw modelNotFound(registry, id);
  return model;
}
