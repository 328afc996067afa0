import type { FastifyInstance } from 'fastify';
import type { ModelDescriptor, ModelRegistry } from '../inference/language-model.ts';
import { modelNotFound } from './model-lookup.ts';

function toOpenAIModel(m: ModelDescriptor) {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy };
}

export async function modelsRoutes(app: FastifyInstance, options: { models: ModelRegistry }): Promise<void> {
  app.get('/models', async () => ({ object: 'list', data: options.models.list().map(toOpenAIModel) }));

  // Ids may contain slashes (`org/model`), so match the rest of the path.
  app.get<{ Params: { '*': string } }>('/models/*', async (request) => {
    // Fastify has already percent-decoded the path.
    const id = request.params['*'];
    const model = options.models.list().find((m) => m.id === id);
    if (model === undefined) throw modelNotFound(options.models, id);
    return toOpenAIModel(model);
  });
}
