import type { SearchMode } from './space-types.ts';

/**
 * What a chat answer carries about retrieval (`svc_retrieval`, chat-retrieval.ts fills it): types
 * only, in a file of their own so the console can import them without the search code behind.
 */
export interface Citation {
  /** The number the model saw: `[1]` in the sources is index 1. */
  index: number;
  space: string;
  document_id: string;
  chunk_id: string;
  title: string | null;
  source: string | null;
  page: number | null;
  heading_path: string[];
  snippet: string;
  /** As a search result's: where the matched words are in `snippet`. */
  snippet_marks: [number, number][];
  score: number;
  /** The reranker's score, when the spaces' rerank default reordered the passages. */
  rerank_score?: number;
}

export type RetrievalStatus = 'ok' | 'no_results' | 'retrieval_unavailable';

/** The extension object beside `choices` (streamed: on the chunk that carries `finish_reason`). */
export interface RetrievalExtension {
  status: RetrievalStatus;
  spaces: string[];
  query: string;
  mode: SearchMode;
  citations: Citation[];
  /** The reranker that ordered the passages: the named spaces' shared rerank default (docs/spaces.md, "Rerank"). */
  reranker?: string;
  /** Why retrieval could not run (`status: "retrieval_unavailable"`). */
  error?: { code: string; message: string };
}
