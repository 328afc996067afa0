import type { LanguageModel, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';

/** 404 `model_not_found` that says which models there are, or how to add one. */
export function modelNotFound(registry: ModelRegistry, id: string): ApiError {
  const available = registry.list().map((m) => m.id);
  const hint = available.length > 0
    ? `Available models: ${available.join(', ')}.`
    : 'No model is configured: start the daemon with `svc serve --model /path/to/model.gguf`, or put a .gguf file in the data directory\'s models/ folder (models in Ollama\'s store, the Hugging Face cache and LM Studio\'s folder are found too unless --discover turns that off).';
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model ${quoteInput(id)} does not exist. ${hint}`,
  });
}

/** The model named in a request, or the 404 above. */
export function lookupModel(registry: ModelRegistry, id: string): LanguageModel {
  const model = registry.model(id);
  if (model === undefined) throw modelNotFound(registry, id);
  return model;
}
