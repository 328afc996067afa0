import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { stringifyInSlices } from '../shared/json-in-slices.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { refuseLocalContext } from './local-context-guard.ts';
import { markedLocalContext } from '../mcp/local-context-marker.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { requestBody } from '../openai/request-body.ts';
import { CLIENT_CLOSED_REQUEST, logRequest } from '../http/request-log.ts';
import { embeddingRequestSchema } from '../openai/openai-schemas.ts';

/** float32 little-endian bytes, base64: what OpenAI returns for `encoding_format: "base64"`. */
export function toBase64Float32(vector: readonly number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export async function embeddingsRoute(app: FastifyInstance, options: { models: ModelRegistry }): Promise<void> {
  app.post('/embeddings', { config: { job: 'embeddings' } }, async (request, reply) => {
    const body = requestBody(embeddingRequestSchema, request.body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => markedLocalContext(request.headers));
    const input = body.input;
    // A flat number array is one tokenized input; an array of arrays is several.
    const inputs: (string | number[])[] = typeof input === 'string'
      ? [input]
      : input.length > 0 && typeof input[0] === 'number' ? [input as number[]] : (input as (string | number[])[]);
    const disconnected = abortOnDisconnect(reply);
    let result;
    try {
      result = await model.embed(inputs, disconnected);
    } catch (error) {
      if (!disconnected.aborted) throw error;
      logRequest(request, CLIENT_CLOSED_REQUEST, reply.elapsedTime);
      return reply.hijack();
    }
    if (body.dimensions != null && body.dimensions !== result.vectors[0]?.length) {
      throw ApiError.invalidRequest(
        `This model's embeddings have ${result.vectors[0]?.length ?? 0} dimensions and cannot be shortened to ${body.dimensions}.`,
        'dimensions', 'unsupported_value',
      );
    }
    const base64 = body.encoding_format === 'base64';
    const answer = {
      object: 'list',
      data: result.vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? toBase64Float32(vector) : vector,
      })),
      model: model.id,
      usage: { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens },
    };
    // 2,048 vectors are megabytes of JSON: written a slice at a time, not in one call.
    return reply.header('content-type', 'application/json; charset=utf-8').send(await stringifyInSlices(answer, 'data'));
  });
}
