import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ModelRegistry } from '../inference/language-model.ts';
import { notAReranker } from '../inference/rank-documents.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { CLIENT_CLOSED_REQUEST, logRequest } from '../http/request-log.ts';
import { markedLocalContext } from '../mcp/local-context-marker.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { requestBody } from '../openai/request-body.ts';
import { refuseLocalContext } from './local-context-guard.ts';

/** Documents one request may rerank: Cohere's documented maximum; each is one model evaluation. */
export const MAX_RERANK_DOCUMENTS = 1000;
/** Characters of one document, and of the query: far above any reranker's context (512–8192 tokens), so the context check decides in practice. */
export const MAX_RERANK_TEXT_CHARS = 64 * 1024;

const text = (what: string) => z.string().max(MAX_RERANK_TEXT_CHARS, `${what} is at most ${MAX_RERANK_TEXT_CHARS} characters`);

/**
 * The rerank request as llama.cpp's server, Jina and Cohere take it: documents are strings, or
 * objects with a `text` (Jina's and Cohere v1's form; other fields of such an object are
 * ignored, as Jina does). Unknown top-level fields are refused, naming them.
 */
export const rerankRequestSchema = z.strictObject({
  model: z.string().min(1),
  query: text('query'),
  documents: z
    .array(z.union([text('a document'), z.looseObject({ text: text('a document') })], {
      error: 'each document is a string or an object with a string text field',
    }), {
      error: 'documents must be an array of strings or of objects with a text field',
    })
    .min(1, 'documents must hold at least one document')
    .max(MAX_RERANK_DOCUMENTS, `documents holds at most ${MAX_RERANK_DOCUMENTS} documents`),
  top_n: z.number().int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
});

/**
 * `POST /v1/rerank` (and llama.cpp's alias `/v1/reranking`): scores each document against the
 * query with a GGUF reranker and answers in llama.cpp's shape — `{model, object: "list", usage,
 * results: [{index, relevance_score}]}`, best first, cut to `top_n` — with Jina's and Cohere's
 * `document: {text}` added when `return_documents` is true.
 */
export async function rerankRoute(app: FastifyInstance, options: { models: ModelRegistry }): Promise<void> {
  for (const path of ['/rerank', '/reranking']) {
    app.post(path, { config: { job: 'rerank' } }, async (request, reply) => {
      const body = requestBody(rerankRequestSchema, request.body);
      const model = lookupModel(options.models, body.model);
      request.model = model.id;
      refuseLocalContext(model, () => markedLocalContext(request.headers));
      // Refused before anything loads: a listed model whose header says it is no reranker, or
      // one with no ranking at all (an upstream's, the built-in embedder).
      const descriptor = options.models.list().find((m) => m.id === model.id);
      if (model.rank === undefined || (descriptor?.capabilities !== undefined && !descriptor.capabilities.includes('rerank'))) {
        throw notAReranker(model.id);
      }
      const documents = body.documents.map((d) => (typeof d === 'string' ? d : d.text));
      const disconnected = abortOnDisconnect(reply);
      let ranked;
      try {
        ranked = await model.rank(body.query, documents, disconnected);
      } catch (error) {
        if (!disconnected.aborted) throw error;
        logRequest(request, CLIENT_CLOSED_REQUEST, reply.elapsedTime);
        return reply.hijack();
      }
      // Best first; equal scores keep document order (sort is stable).
      const order = ranked.scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score);
      const results = order.slice(0, body.top_n ?? order.length).map(({ index, score }) => ({
        index,
        relevance_score: score,
        ...(body.return_documents === true ? { document: { text: documents[index]! } } : {}),
      }));
      return {
        model: model.id,
        object: 'list',
        usage: { prompt_tokens: ranked.promptTokens, total_tokens: ranked.promptTokens },
        results,
      };
    });
  }
}
