import { stemmer } from 'stemmer';
import { quoteInput } from '../shared/quote-input.ts';
import { bm25Expression, indexRowBudget, queryTerms, selectiveTerms } from './bm25-query.ts';
import { HashedEmbedder, queryWeightWords } from './hashed-embedder.ts';
import { fuseRanks } from './rank-fusion.ts';
import { markedSnippet } from './search-snippet.ts';
import type { SpaceAccess } from './space-access.ts';
import { reindexRequired } from './space-errors.ts';
import { metadataValueKey, parseSearchRequest, type ParsedSearchRequest } from './space-input.ts';
import type { ChunkRow, SpaceRow } from './space-rows.ts';
import type { SearchRequest, SearchResult } from './space-types.ts';

/**
 * How many of each list hybrid search fuses: max(HYBRID_DEPTH, 2 × top_k). Shallow on purpose:
 * a passage ranked 4th by one list alone scores 1/64, and deep lists are full of passages both
 * rank middling (two ranks of 25 make 2/85), which push it out. Fusing 20 of each instead of 50
 * found 4, 2 and 5 more of the 464 labelled answers in spaces of 100,000 passages generated from
 * three seeds, with a higher MRR in each (BENCHMARKS.md, "Hybrid search side by side with LanceDB").
 */
const HYBRID_DEPTH = 20;

/**
 * Search over one space or several: a BM25 list (the in-memory index once it is full, FTS5
 * until then) and a dense list (the vector index), fused by rank, the winners read from the
 * store. Synchronous once the query vector is made, so a search sees one state of the store.
 */
export class SpaceSearch {
  readonly #access: SpaceAccess;

  constructor(access: SpaceAccess) {
    this.#access = access;
  }

  async search(space: string, request: SearchRequest): Promise<SearchResult[]> {
    const access = this.#access;
    access.open();
    const parsed = parseSearchRequest(request);
    const row = access.space(space);
    if (parsed.mode !== 'bm25') access.embedders.require(row);
    const modelVector = await this.#modelQueryVector(parsed);
    access.open();
    const current = access.currentSpace(row);
    const lists = this.#rankSpace(current, parsed, modelVector);
    return this.#fuseAndRead(lists, new Map([[current.id, current]]), parsed);
  }

  async searchAll(request: SearchRequest & { spaces?: string[] }): Promise<SearchResult[]> {
    const access = this.#access;
    access.open();
    const parsed = parseSearchRequest(request);
    const rows = parsed.spaces === null ? access.store.listSpaces() : uniqueById(parsed.spaces.map((name) => access.space(name)));
    if (parsed.mode !== 'bm25') {
      const stale = rows.filter((row) => access.embedders.needsReindex(row));
      if (stale.length > 0) {
        throw reindexRequired(`${stale.length === 1 ? 'Space' : 'Spaces'} ${stale.map((row) => quoteInput(row.name)).join(', ')} ${stale.length === 1 ? 'holds' : 'hold'} vectors of another embedder than ${quoteInput(access.embedders.current.id)}: reindex, or search with mode "bm25".`);
      }
    }
    const modelVector = await this.#modelQueryVector(parsed);
    access.open();
    // One BM25 list and one dense list over all the spaces, then fused like one space's. Dense
    // similarities compare across spaces (one embedder made every vector, or versions of the
    // built-in one, all cosines of unit vectors: stale spaces were refused above); BM25 scores use each space's own statistics, close enough to merge.
    // Fusing each space's own ranks instead would put every space's best hit near the top,
    // however poor it is.
    const spaces = new Map<number, SpaceRow>();
    const merged: RankedLists = { bm25: parsed.mode === 'dense' ? null : [], dense: parsed.mode === 'bm25' ? null : [] };
    for (const row of rows) {
      const current = access.store.spaceById(row.id);
      // A space deleted while the query was embedded has nothing left to find.
      if (current === undefined) continue;
      spaces.set(current.id, current);
      const lists = this.#rankSpace(current, parsed, modelVector);
      const tag = (item: Ranked) => ({ ...item, space: current.id });
      merged.bm25?.push(...lists.bm25!.map(tag));
      merged.dense?.push(...lists.dense!.map(tag));
    }
    const depth = searchDepth(parsed);
    // Chunk row ids are unique across spaces, so ties keep a stable order by id.
    const best = (list: Ranked[] | null) => list?.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, depth) ?? null;
    return this.#fuseAndRead({ bm25: best(merged.bm25), dense: best(merged.dense) }, spaces, parsed);
  }

  /** The query vector from a model embedder (the same for every space); null for the built-in one, which weighs words by each space's idf. */
  async #modelQueryVector(request: ParsedSearchRequest): Promise<Float32Array | null> {
    const embedder = this.#access.embedders.current;
    if (request.mode === 'bm25' || embedder instanceof HashedEmbedder) return null;
    const [vector] = await embedder.embed([request.query], 'query');
    if (vector === undefined || vector.length !== embedder.dimensions) throw new Error(`embedder ${embedder.id} returned no vector of ${embedder.dimensions} for the query`);
    return vector;
  }

  /** A space's BM25 and dense lists (null: not in this mode), best first; synchronous, so one state of the store. */
  #rankSpace(row: SpaceRow, request: ParsedSearchRequest, modelVector: Float32Array | null): RankedLists {
    const { store, embedders, indexes } = this.#access;
    const { mode } = request;
    if (mode !== 'bm25') embedders.require(row);
    const lists: RankedLists = { bm25: mode === 'dense' ? null : [], dense: mode === 'bm25' ? null : [] };
    let documentIds: number[] | null = null;
    if (request.documentIds !== null || request.metadata.length > 0) {
      documentIds = store.filterDocuments(row.id, request.documentIds, request.metadata.map(([key, value]) => [key, metadataValueKey(value)]));
      if (documentIds.length === 0) return lists;
    }
    const depth = searchDepth(request);
    const frequencies = store.documentFrequencies(row.id, queryWeightWords(request.query));
    const frequency = (word: string) => frequencies.get(word) ?? 0;
    const textIndex = lists.bm25 === null ? null : indexes.textIndex(row);
    // The in-memory indexes filter by chunk id; FTS5 joins the documents itself.
    const accept = documentIds === null || (textIndex === null && lists.dense === null) ? undefined : membership(store.chunkIdsOfDocuments(documentIds));
    if (lists.bm25 !== null) {
      const terms = queryTerms(request.query);
      if (textIndex !== null) {
        lists.bm25 = textIndex.search(selectiveTerms(terms, frequency, row.chunk_count, indexRowBudget), depth, accept);
      } else {
        const expression = bm25Expression(selectiveTerms(terms, frequency, row.chunk_count));
        if (expression !== null) lists.bm25 = store.bm25(row.id, expression, depth, documentIds);
      }
    }
    if (lists.dense !== null) {
      const vector = modelVector ?? this.#hashedQueryVector(row, request.query, frequency);
      // A query without a single word has no direction: nothing is near it.
      if (vector.some((value) => value !== 0)) {
        // Hybrid: BM25's list is a hint to an approximate index (vector-index.ts, `alsoConsider`).
        const hint = lists.bm25?.map((item) => item.id);
        lists.dense = indexes.vectorIndex(row).search(vector, depth, accept, hint).map((hit) => ({ id: hit.id, score: hit.similarity }));
      }
    }
    return lists;
  }

  /**
   * Reciprocal rank fusion of the lists, then the winners read from the store by row id: a
   * chunk replaced or deleted since an index saw it is simply not there, so its old text can
   * never come back (the next candidates take its place).
   */
  #fuseAndRead(lists: RankedLists, spaces: ReadonlyMap<number, SpaceRow>, request: ParsedSearchRequest): SearchResult[] {
    const inputs = [lists.bm25, lists.dense].filter((list) => list !== null);
    const fused = fuseRanks(inputs.map((list) => list.map((item) => item.id)));
    const bm25At = lists.bm25 === null ? -1 : 0;
    const denseAt = lists.dense === null ? -1 : inputs.length - 1;
    const spaceOf = new Map<number, SpaceRow>();
    for (const list of inputs) for (const item of list) if (item.space !== undefined) spaceOf.set(item.id, spaces.get(item.space)!);
    const terms = queryTerms(request.query);
    const results: SearchResult[] = [];
    const topK = request.top_k;
    for (let from = 0; from < fused.length && results.length < topK; from += topK) {
      const candidates = fused.slice(from, from + topK);
      const rows = new Map<number, { chunk: ChunkRow; space: SpaceRow }>();
      for (const space of spaces.values()) {
        const ids = candidates.map((item) => item.key).filter((id) => (spaceOf.get(id) ?? space) === space);
        for (const chunk of this.#access.store.chunksByIds(space.id, ids)) rows.set(chunk.id, { chunk, space });
      }
      for (const item of candidates) {
        const found = rows.get(item.key);
        if (found === undefined || results.length === topK) continue;
        const bm25Rank = bm25At < 0 ? null : item.ranks[bm25At]!;
        const denseRank = denseAt < 0 ? null : item.ranks[denseAt]!;
        results.push(searchResult(found.space.name, found.chunk, terms, item.score, bm25Rank, denseRank));
      }
    }
    return results;
  }

  /** The built-in embedder's query vector (the version the space records), each word weighed by its idf in this space (hashed-embedder.ts says why). */
  #hashedQueryVector(row: SpaceRow, query: string, frequency: (word: string) => number): Float32Array {
    const embedder = this.#access.embedders.require(row) as HashedEmbedder;
    return embedder.queryVector(query, frequency, row.chunk_count);
  }
}

/** A chunk row id with a larger-is-better score (BM25, cosine); `space` set when lists of several spaces merge. */
interface Ranked {
  id: number;
  score: number;
  space?: number;
}

interface RankedLists {
  bm25: Ranked[] | null;
  dense: Ranked[] | null;
}

/** How deep each list goes: top_k for one list; for hybrid, max(HYBRID_DEPTH, 2 × top_k) of each (HYBRID_DEPTH says why not deeper). */
function searchDepth(request: ParsedSearchRequest): number {
  return request.mode === 'hybrid' ? Math.max(HYBRID_DEPTH, 2 * request.top_k) : request.top_k;
}

function searchResult(space: string, chunk: ChunkRow, terms: readonly string[], score: number, bm25Rank: number | null, denseRank: number | null): SearchResult {
  // FTS5 matches Porter stems, so the snippet marks words by their stem too.
  const { snippet, marks } = markedSnippet(chunk.text, terms, { matchKey: stemmer });
  return {
    space,
    chunk_id: chunk.public_id,
    document_id: chunk.document_public_id,
    title: chunk.title,
    source: chunk.source,
    page: chunk.page,
    heading_path: JSON.parse(chunk.heading_path) as string[],
    text: chunk.text,
    snippet,
    snippet_marks: marks,
    score,
    bm25_rank: bm25Rank,
    dense_rank: denseRank,
  };
}

function membership(ids: readonly number[]): (id: number) => boolean {
  const set = new Set(ids);
  return (id) => set.has(id);
}

function uniqueById(rows: SpaceRow[]): SpaceRow[] {
  const seen = new Set<number>();
  return rows.filter((row) => !seen.has(row.id) && (seen.add(row.id), true));
}
