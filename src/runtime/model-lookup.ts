import type { LanguageModel, ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';

/** The model named in a request, or a 404 that says what is available and how to add a model. */
export function lookupModel(registry: ModelRegistry, id: string): LanguageModel {
  const model = registry.model(id);
  if (model !== undefined) return model;
  const available = registry.list().map((m) => m.id);
  const hint = available.length > 0
    ? `Available models: ${available.join(', ')}.`
    : 'No model is configured: start the daemon with `svc serve --model /path/to/model.gguf`, or put a .gguf file in the data directory\'s models/ folder.';
  throw new ApiError({
      status: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
      message: `The model '${id}' does not exist. ${hint}`,
  });
}
