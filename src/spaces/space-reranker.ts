/**
 * The second stage of a space search: a reranker model (a cross-encoder, `/v1/rerank`'s) reads
 * the query with each of the fused candidates' text and orders them by its score. Fusion ranks
 * by where the words and the vector put a chunk; a reranker reads query and chunk together, so it
 * can tell a passage that answers from one that only shares words. It costs one model
 * evaluation per candidate, which is why only the top `rerank_depth` fused candidates go to it.
 */
import type { ModelRegistry } from '../inference/language-model.ts';
import { isRemoteModel } from '../inference/model-plane.ts';
import { notAReranker } from '../inference/rank-documents.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { SearchResult, SpaceSearchDefaults } from './space-types.ts';

/** Scores texts against a query, one score per text in order (higher: more relevant). */
export interface Reranker {
  readonly id: string;
  rank(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]>;
}

/** Candidates reranked when the request does not say: enough to lift a passage fusion put on page two. */
export const DEFAULT_RERANK_DEPTH = 30;

/** A search's rerank stage: which reranker, how many fused candidates it reads, and whose choice it was. */
export interface RerankPlan {
  choice: true | string;
  depth: number;
  /** `request`: the search asked; otherwise the names of the spaces whose default it is. */
  from: 'request' | string[];
}

/**
 * Whether a search reranks (docs/spaces.md, "Rerank"), from what it asked and the defaults of
 * the spaces it searches: a `rerank` in the request wins (`false` is no rerank); without one it
 * reranks only when every searched space has the same default (all `true`, or all one model id),
 * so a space nobody set up for it is never reranked, nor by another space's model. The depth:
 * the request's, else the deepest the spaces keep, else 30; never below `top_k`.
 */
export function rerankPlan(request: { rerank?: boolean | string | null | undefined; rerank_depth?: number | null | undefined }, topK: number, spaces: readonly (SpaceSearchDefaults & { name: string })[]): RerankPlan | null {
  if (request.rerank === false) return null;
  let choice: true | string;
  let from: RerankPlan['from'] = 'request';
  if (request.rerank == null) {
    const first = spaces[0]?.rerank;
    if (first === undefined || first === false || spaces.some((space) => space.rerank !== first)) return null;
    choice = first;
    from = spaces.map((space) => space.name);
  } else {
    choice = request.rerank;
  }
  const kept = spaces.flatMap((space) => (space.rerank_depth === null ? [] : [space.rerank_depth]));
  const depth = request.rerank_depth ?? (kept.length === 0 ? DEFAULT_RERANK_DEPTH : Math.max(...kept));
  return { choice, depth: Math.max(topK, depth), from };
}

/**
 * The reranker a search asked for: `true` takes the first model the daemon lists with the
 * `rerank` capability, a string names one. A remote upstream's model is refused (space contents
 * stay on this machine), as is a model that cannot rerank.
 */
export function chooseReranker(models: ModelRegistry, choice: true | string): Reranker {
  const id = choice === true
    ? models.list().find((m) => m.capabilities?.includes('rerank') === true && m.plane !== 'remote')?.id
    : choice;
  if (id === undefined) {
    throw ApiError.invalidRequest('rerank: true needs a reranker model, and this daemon serves none: add a GGUF reranker (bge-reranker-v2-m3, jina-reranker-v2) with --model or to the models folder; /v1/models lists rerankers with the capability "rerank".', 'rerank', 'no_reranker');
  }
  const model = models.model(id);
  if (model === undefined) throw ApiError.invalidRequest(`rerank: no model ${quoteInput(id)} (/v1/models lists the ids).`, 'rerank', 'model_not_found');
  if (isRemoteModel(model)) throw ApiError.invalidRequest(`rerank: the model ${quoteInput(id)} is served by a remote upstream, and space contents stay on this machine.`, 'rerank', 'remote_reranker');
  const descriptor = models.list().find((m) => m.id === model.id);
  const rank = model.rank?.bind(model);
  if (rank === undefined || (descriptor?.capabilities !== undefined && !descriptor.capabilities.includes('rerank'))) {
    throw new ApiError({ ...notAReranker(model.id).toOptions(), param: 'rerank' });
  }
  return { id: model.id, rank: async (query, texts, signal) => (await rank(query, texts, signal)).scores };
}

/**
 * Orders fused results by the reranker's score (ties keep the fused order) and keeps `topK`;
 * each result keeps its fused `score` and ranks and gains `rerank_score`.
 */
export async function rerankResults(results: readonly SearchResult[], query: string, reranker: Reranker, topK: number, signal?: AbortSignal): Promise<SearchResult[]> {
  if (results.length === 0) return [];
  const scores = await reranker.rank(query, results.map((r) => r.text), signal);
  return results
    .map((result, i) => ({ ...result, rerank_score: scores[i]! }))
    .sort((a, b) => b.rerank_score - a.rerank_score)
    .slice(0, topK);
}
