import type { ChatMessage } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { rerankPlan, rerankResults, type Reranker } from './space-reranker.ts';
import type { Citation, RetrievalExtension } from './retrieval-extension.ts';
import type { SearchMode, SearchResult, SpaceLibrary, SpaceRecord } from './space-types.ts';

/**
 * Retrieval in chat: a chat request that names spaces (`spaces: ["notes"]`) gets the best
 * passages of those spaces as numbered sources in its system message, and the response carries
 * them as `svc_retrieval.citations` beside `choices`. A retrieval that could not run is said so
 * (`status: "retrieval_unavailable"`), never passed off as a lookup that found nothing.
 */
export const DEFAULT_CHAT_PASSAGES = 5;

export interface ChatRetrieval {
  /** The turns to generate from: the caller's, with the sources in the system message. */
  messages: ChatMessage[];
  extension: RetrievalExtension;
  /** The failure's cause, for the local log, when retrieval was unavailable. */
  failure?: unknown;
}

export interface RetrievalRequest {
  spaces: readonly string[];
  topK?: number | undefined;
  mode?: SearchMode | undefined;
  /** The reranker a rerank default names (space-reranker.ts chooseReranker); absent, defaults are not applied. */
  reranker?: ((choice: true | string) => Reranker) | undefined;
}

/** The query: the last user turn's text (what the person just asked). */
function queryOf(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user' && message.content.trim() !== '') return message.content;
  }
  return '';
}

function sourceLabel(result: SearchResult): string {
  const where = [result.title ?? result.source ?? result.document_id, ...result.heading_path].join(' › ');
  return result.page === null ? where : `${where} (page ${result.page})`;
}

const INSTRUCTIONS =
  'Answer using the numbered sources below when they are relevant, and cite them by number like [1]. ' +
  'If the sources do not contain the answer, say so rather than guess.';

/** Puts the sources in the system message: merged into the caller's first one, or a new one first (chat templates expect one system turn, at the start). */
function withSources(messages: readonly ChatMessage[], results: readonly SearchResult[]): ChatMessage[] {
  const sources = results.map((r, i) => `[${i + 1}] ${sourceLabel(r)}\n${r.text}`).join('\n\n');
  const block = `${INSTRUCTIONS}\n\nSources:\n\n${sources}`;
  const first = messages[0];
  if (first?.role === 'system') return [{ ...first, content: `${first.content}\n\n${block}` }, ...messages.slice(1)];
  return [{ role: 'system', content: block }, ...messages];
}

/**
 * Searches the named spaces with the last user turn. Unknown spaces and bad arguments are the
 * caller's errors (thrown: 404/400); a search that fails for any other reason (the index or the
 * embedder unavailable, a store error) answers without sources and says `retrieval_unavailable`.
 */
export async function retrieveForChat(library: SpaceLibrary, messages: readonly ChatMessage[], request: RetrievalRequest): Promise<ChatRetrieval> {
  const records: SpaceRecord[] = [];
  const seen = new Set<string>();
  for (const name of request.spaces) {
    const space = await library.getSpace(name);
    if (!seen.has(space.name)) records.push(space);
    seen.add(space.name);
  }
  const spaces = records.map((space) => space.name);
  const topK = request.topK ?? DEFAULT_CHAT_PASSAGES;
  // The spaces' own rerank default, by the rule a search without `rerank` follows.
  const plan = request.reranker === undefined ? null : rerankPlan({}, topK, records);
  let reranker: Reranker | undefined;
  const query = queryOf(messages);
  const mode = request.mode ?? 'hybrid';
  const base = { spaces, query, mode };
  if (query === '') return { messages: [...messages], extension: { ...base, status: 'no_results', citations: [] } };
  let results: SearchResult[];
  try {
    if (plan === null) {
      results = await library.searchAll({ query, spaces, mode, top_k: topK });
    } else {
      reranker = request.reranker!(plan.choice);
      results = await rerankResults(await library.searchAll({ query, spaces, mode, top_k: plan.depth }), query, reranker, topK);
    }
  } catch (error) {
    // A space's state, not the request, is at fault when its vectors need a reindex or its
    // rerank default names a reranker the daemon does not serve: the turn is answered without sources.
    if (error instanceof ApiError && error.status < 500 && error.code !== 'reindex_required' && error.param !== 'rerank') throw error;
    const reason = error instanceof ApiError && error.status < 500
      ? { code: error.code, message: error.message }
      : { code: 'search_failed', message: 'The spaces could not be searched; the daemon log says why.' };
    return { messages: [...messages], extension: { ...base, status: 'retrieval_unavailable', citations: [], error: reason }, failure: error };
  }
  const citations = results.map((r, i): Citation => ({
    index: i + 1, space: r.space, document_id: r.document_id, chunk_id: r.chunk_id, title: r.title, source: r.source,
    page: r.page, heading_path: r.heading_path, snippet: r.snippet, snippet_marks: r.snippet_marks, score: r.score,
    ...(r.rerank_score === undefined ? {} : { rerank_score: r.rerank_score }),
  }));
  const reranked = reranker === undefined ? {} : { reranker: reranker.id };
  if (results.length === 0) return { messages: [...messages], extension: { ...base, ...reranked, status: 'no_results', citations } };
  return { messages: withSources(messages, results), extension: { ...base, ...reranked, status: 'ok', citations } };
}
