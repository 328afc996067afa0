import type { FastifyInstance } from 'fastify';
import { inputItemsQuerySchema } from '../openai/openai-schemas.ts';
import type { ResponseStore } from '../openai/response-store.ts';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';

export interface StoredResponsesRoutesOptions {
  /** The responses store; absent (`--responses-max-size 0`), every id is unknown. */
  store: ResponseStore | undefined;
}

function notStored(id: string, store: ResponseStore | undefined): ApiError {
  const why = store === undefined
    ? 'this svc keeps no responses (started with --responses-max-size 0)'
    : 'it was not stored (store: false), or it was deleted or passed the retention or size cap of the responses store';
  return ApiError.notFound(`No response with id ${quoteInput(id)}: ${why}.`, 'not_found', 'response_id');
}

/**
 * OpenAI's stored-response endpoints: `GET /v1/responses/{id}` (the Response object as
 * answered), `DELETE /v1/responses/{id}`, and `GET /v1/responses/{id}/input_items` (the input
 * items it was sent, as OpenAI's cursor list). An unknown id is 404 in the error envelope.
 */
export async function storedResponsesRoutes(app: FastifyInstance, options: StoredResponsesRoutesOptions): Promise<void> {
  const { store } = options;
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/responses/:id', async (request) => {
    const { id } = request.params;
    if (request.query.stream === 'true') {
      throw ApiError.unsupported('stream', 'stream is for background responses, which svc does not run: retrieve the stored response without it.');
    }
    const response = store?.get(id);
    if (response === undefined) throw notStored(id, store);
    return response;
  });
  app.delete<{ Params: { id: string } }>('/responses/:id', async (request) => {
    const { id } = request.params;
    if (store === undefined || !store.delete(id)) throw notStored(id, store);
    return { id, object: 'response', deleted: true };
  });
  app.get<{ Params: { id: string }; Querystring: unknown }>('/responses/:id/input_items', async (request) => {
    const { id } = request.params;
    const query = parseWithSchema(inputItemsQuerySchema, request.query);
    const page = store?.inputItems(id, query);
    if (page === undefined) throw notStored(id, store);
    if (page === 'unknown_after') {
      throw ApiError.invalidRequest(`after ${quoteInput(query.after ?? '')} is not the id of an input item of response ${quoteInput(id)}.`, 'after');
    }
    return page;
  });
}
