/**
 * Reranking on a loaded GGUF reranker through node-llama-cpp's ranking context: each document
 * is read together with the query (`<bos> query <eos> document <eos>`, or the model's own
 * `tokenizer.chat_template.rerank`), and the classification head's output becomes a score in
 * [0, 1] (a sigmoid of the logit; Qwen3-style heads already give a probability).
 */
import { ApiError } from '../shared/api-error.ts';
import type { LlamaEngineOptions } from './llama-engine-options.ts';
import type { RankResult } from './language-model.ts';
import { contextSizeFor, type LoadedLlamaModel } from './loaded-llama-model.ts';
import { contextLengthExceeded, refuseOversizedText, type TokenCounter } from './token-budget.ts';

/** 400 `model_not_reranker`: the model has no classification head for rank pooling. */
export function notAReranker(id: string): ApiError {
  return ApiError.invalidRequest(
    `The model ${id} is not a reranker: /v1/rerank needs a GGUF reranker (pooling type rank and a classification head, such as bge-reranker-v2-m3 or jina-reranker-v2). /v1/models lists rerankers with the capability "rerank".`,
    'model', 'model_not_reranker',
  );
}

export async function rankDocuments(
  loaded: LoadedLlamaModel, id: string, options: Pick<LlamaEngineOptions, 'contextSize' | 'threads'>,
  query: string, documents: readonly string[], signal: AbortSignal | undefined,
): Promise<RankResult> {
  if (!loaded.model.fileInsights.supportsRanking) throw notAReranker(id);
  const contextSize = contextSizeFor(loaded.model, options);
  loaded.ranking ??= loaded.model.createRankingContext({
    contextSize,
    ...(options.threads !== undefined ? { threads: options.threads } : {}),
  });
  const context = await loaded.ranking;
  const counter: TokenCounter = { maxBytesPerToken: loaded.maxBytesPerToken, count: (text) => loaded.model.tokenize(text).length };
  // Every pair is checked before any is evaluated, so a too-long document costs no inference.
  await refuseOversizedText(counter, [query], context.contextSize, 'query', 'query', signal);
  const lengths: number[] = [];
  for (const [index, document] of documents.entries()) {
    signal?.throwIfAborted();
    await refuseOversizedText(counter, [document], context.contextSize, 'documents', `documents[${index}]`, signal);
    const length = context.calculateInputLength(query, document);
    if (length >= context.contextSize) {
      throw contextLengthExceeded('documents', `The query and documents[${index}] are ${length} tokens together; this model reranks at most ${context.contextSize - 1} per pair.`);
    }
    lengths.push(length);
  }
  const scores: number[] = [];
  for (const document of documents) {
    // One pair at a time (the context evaluates one sequence): a client that leaves stops the rest.
    signal?.throwIfAborted();
    scores.push(await context.rank(query, document));
  }
  return { scores, promptTokens: lengths.reduce((sum, n) => sum + n, 0) };
}
