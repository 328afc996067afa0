import { performance } from 'node:perf_hooks';
import type { SearchMode, SearchResult, SpaceLibrary } from '../space-types.ts';
import { SEARCH_MODES } from '../space-types.ts';
import { firstRelevantRank, foundOnlyBy, meanReciprocalRank, percentile, recallAtK, summarizeLatencies } from './eval-metrics.ts';
import type { LatencySummary } from './eval-metrics.ts';
import { QUERY_KINDS } from './labelled-set.ts';
import type { LabelledDocument, LabelledSet, QueryKind } from './labelled-set.ts';

/**
 * Runs the labelled set against a SpaceLibrary, through its public surface only: ingest, then
 * every query in every mode, then the stale-memory check. The steps are exported one by one so
 * the benchmark can put the same queries to a space filled to 100,000 chunks.
 */

/** Results asked for per query: recall@10 and MRR@10 need ten. */
export const EVAL_TOP_K = 10;
/** Passages chat is given (the answer-support measure). */
export const ANSWER_TOP_K = 5;
/** Results inspected per stale query: more than chat ever sees, so a stale hit cannot hide at rank 11. */
export const STALE_TOP_K = 20;

export interface IngestReport {
  documents: number;
  chunks: number;
  /** UTF-8 bytes of the documents' text. */
  bytes: number;
  seconds: number;
  /** Megabytes (10^6 bytes) of text per second of the library's calls. */
  mbPerSecond: number;
  /** `each`: addDocument calls one after another (one transaction per document); `bulk`: addDocuments calls of up to BULK_DOCUMENTS. */
  how: IngestHow;
  /**
   * CPU time of the whole process (all threads) during the calls, and text per CPU second: on a
   * machine busy with other work the wall-clock rate falls, this one much less.
   */
  cpuSeconds: number;
  mbPerCpuSecond: number;
}

export type IngestHow = 'each' | 'bulk';
/** Documents per addDocuments call when ingesting in bulk (the library groups them into transactions itself). */
export const BULK_DOCUMENTS = 1000;

export interface KindReport {
  kind: QueryKind;
  queries: number;
  recallAt10: number;
  mrr: number;
  /** Median search time of this kind's queries (all rounds): long questions cost more than keywords. */
  p50Ms: number;
}

export interface ModeReport {
  mode: SearchMode;
  queries: number;
  recallAt5: number;
  recallAt10: number;
  /** MRR@10. */
  mrr: number;
  latency: LatencySummary;
  byKind: KindReport[];
  /** The first relevant rank of each query, in the set's order (null: not in the top 10). */
  ranks: (number | null)[];
  /** Share of queries whose top 5 results hold the answer span in the passage text / in the snippet. */
  answerSupport: { passages: number; snippets: number };
}

export interface StaleModeReport {
  mode: SearchMode;
  searches: number;
  /** Share of searches whose top 20 held an old span BEFORE the change: what the check can catch. */
  foundBeforeChange: number;
  resultsChecked: number;
  /** Results after the change whose text holds an old span of a replaced or deleted document. */
  staleResults: number;
  /** Share of searches after the change with no stale result; must be 1. */
  rejectionRate: number;
  /** Share of the searches aimed at a replaced document's facts whose top 20 holds the revision's span: the new text is live. */
  newTextFound: number;
}

export interface StaleReport {
  replaced: number;
  deleted: number;
  queries: number;
  modes: StaleModeReport[];
  /** Over all modes. */
  rejectionRate: number;
  staleResults: number;
}

export interface EvalReport {
  space: string;
  embedder: string;
  dimensions: number;
  set: {
    seed: number | string;
    documents: number;
    chunks: number;
    queries: number;
    queriesByKind: { kind: QueryKind; queries: number }[];
    staleDocuments: number;
    staleQueries: number;
  };
  ingest: IngestReport;
  modes: ModeReport[];
  stale: StaleReport;
  /** Whether hybrid recall@10 is above both single modes; null unless all three ran. */
  hybridBeatsBoth: boolean | null;
  /** Per single mode: queries hybrid finds in its top 10 and that mode does not, and the reverse. */
  fusion: FusionReport[];
}

export interface FusionReport {
  against: SearchMode;
  hybridOnly: number;
  singleOnly: number;
}

/** Hybrid's gains and losses against each single mode that ran beside it. */
export function fusionReport(modes: readonly ModeReport[]): FusionReport[] {
  const hybrid = modes.find((m) => m.mode === 'hybrid');
  if (!hybrid) return [];
  return modes.filter((m) => m.mode !== 'hybrid').map((m) => {
    const { aOnly, bOnly } = foundOnlyBy(hybrid.ranks, m.ranks, EVAL_TOP_K);
    return { against: m.mode, hybridOnly: aOnly, singleOnly: bOnly };
  });
}

export interface EvaluateSpaceOptions {
  /** The space the set is written to; it must not exist. Default `svc-eval`. */
  space?: string;
  modes?: readonly SearchMode[];
  onProgress?: (line: string) => void;
}

/**
 * Adds documents one by one (`each`, the default) or in addDocuments calls (`bulk`) and times
 * the library's calls; returns their ids by document key.
 */
export async function ingestDocuments(
  library: SpaceLibrary,
  space: string,
  documents: Iterable<LabelledDocument>,
  onProgress?: (done: number, chunks: number) => void,
  how: IngestHow = 'each',
): Promise<{ ids: Map<string, string>; report: IngestReport }> {
  const ids = new Map<string, string>();
  let bytes = 0;
  let chunks = 0;
  let busyMs = 0;
  let cpuMicros = 0;
  const add = async (batch: readonly LabelledDocument[]) => {
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const results = how === 'each'
      ? [{ ok: true as const, ...(await library.addDocument(space, batch[0]!.input)) }]
      : await library.addDocuments(space, batch.map((doc) => doc.input));
    const cpu = process.cpuUsage(cpuStart);
    busyMs += performance.now() - start;
    cpuMicros += cpu.user + cpu.system;
    for (const [i, result] of results.entries()) {
      const doc = batch[i]!;
      if (!result.ok) throw result.error;
      if (!result.created) throw new Error(`the set holds the same text twice (${doc.key})`);
      ids.set(doc.key, result.document.id);
      bytes += Buffer.byteLength(doc.input.text);
      chunks += result.document.chunk_count;
    }
    onProgress?.(ids.size, chunks);
  };
  let batch: LabelledDocument[] = [];
  for (const doc of documents) {
    batch.push(doc);
    if (how === 'each' || batch.length === BULK_DOCUMENTS) {
      await add(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await add(batch);
  const seconds = busyMs / 1000;
  const cpuSeconds = cpuMicros / 1e6;
  const rate = (per: number) => (per > 0 ? bytes / 1e6 / per : 0);
  return { ids, report: { documents: ids.size, chunks, bytes, seconds, mbPerSecond: rate(seconds), how, cpuSeconds, mbPerCpuSecond: rate(cpuSeconds) } };
}

function withoutMarks(snippet: string): string {
  return snippet.replaceAll('«', '').replaceAll('»', '');
}

/**
 * Puts every labelled query to the space in each mode, `rounds` times (latency samples from every
 * round, ranks from the first: search is deterministic). A short warm-up per mode comes first so
 * the first queries do not time lazy compilation.
 */
export async function runLabelledQueries(
  library: SpaceLibrary,
  space: string,
  set: LabelledSet,
  ids: ReadonlyMap<string, string>,
  options: { modes?: readonly SearchMode[]; rounds?: number; onProgress?: (line: string) => void } = {},
): Promise<ModeReport[]> {
  const modes = options.modes ?? SEARCH_MODES;
  const rounds = options.rounds ?? 1;
  const reports: ModeReport[] = [];
  // Latencies of full indexes: a first search starts filling them (and FTS5 answers BM25 until
  // its index is full), which a daemon does once per space after it starts.
  await library.warmUp(space);
  for (const mode of modes) {
    for (const query of set.queries.slice(0, 20)) await library.search(space, { query: query.text, mode, top_k: EVAL_TOP_K });
    const latencies: number[] = [];
    const ranks: (number | null)[] = [];
    let passageSupport = 0;
    let snippetSupport = 0;
    for (let round = 0; round < rounds; round++) {
      for (const query of set.queries) {
        const start = performance.now();
        const results = await library.search(space, { query: query.text, mode, top_k: EVAL_TOP_K });
        latencies.push(performance.now() - start);
        if (round > 0) continue;
        const target = ids.get(query.documentKey);
        ranks.push(firstRelevantRank(results, (r: SearchResult) => r.document_id === target && r.text.includes(query.answerSpan)));
        const top = results.slice(0, ANSWER_TOP_K);
        if (top.some((r) => r.text.includes(query.answerSpan))) passageSupport++;
        if (top.some((r) => withoutMarks(r.snippet).includes(query.answerSpan))) snippetSupport++;
      }
    }
    const byKind = QUERY_KINDS.map((kind): KindReport => {
      const kindRanks = ranks.filter((_, i) => set.queries[i]!.kind === kind);
      // Latencies are in query order round after round.
      const kindLatencies = latencies.filter((_, i) => set.queries[i % set.queries.length]!.kind === kind);
      return { kind, queries: kindRanks.length, recallAt10: recallAtK(kindRanks, 10), mrr: meanReciprocalRank(kindRanks, EVAL_TOP_K), p50Ms: percentile(kindLatencies, 50) };
    });
    const report: ModeReport = {
      mode,
      queries: ranks.length,
      recallAt5: recallAtK(ranks, 5),
      recallAt10: recallAtK(ranks, 10),
      mrr: meanReciprocalRank(ranks, EVAL_TOP_K),
      latency: summarizeLatencies(latencies),
      byKind,
      ranks,
      answerSupport: { passages: passageSupport / Math.max(1, ranks.length), snippets: snippetSupport / Math.max(1, ranks.length) },
    };
    options.onProgress?.(`${mode}: recall@10 ${report.recallAt10.toFixed(3)}, MRR ${report.mrr.toFixed(3)}, p50 ${report.latency.p50Ms.toFixed(2)} ms`);
    reports.push(report);
  }
  return reports;
}

async function staleSearches(
  library: SpaceLibrary, space: string, set: LabelledSet, mode: SearchMode,
): Promise<{ searches: number; withOld: number; results: number; staleResults: number; newSearches: number; newFound: number }> {
  const oldSpans = set.stale.flatMap((c) => c.oldSpans);
  const counts = { searches: 0, withOld: 0, results: 0, staleResults: 0, newSearches: 0, newFound: 0 };
  for (const c of set.stale) {
    for (const query of c.queries) {
      const found = await library.search(space, { query: query.text, mode, top_k: STALE_TOP_K });
      counts.searches++;
      counts.results += found.length;
      // Any old span of any stale document counts, not just this query's own document.
      const stale = found.filter((r) => oldSpans.some((span) => r.text.includes(span) || withoutMarks(r.snippet).includes(span))).length;
      counts.staleResults += stale;
      if (stale > 0) counts.withOld++;
      const newSpan = c.after?.facts.find((fact) => fact.key === query.fact)?.span;
      if (newSpan !== undefined) {
        counts.newSearches++;
        if (found.some((r) => r.text.includes(newSpan))) counts.newFound++;
      }
    }
  }
  return counts;
}

/**
 * The stale-memory check. Before the change, the stale queries are put to the space to show that
 * they do reach the old text (a check that could never fire would prove nothing); then each stale
 * document is replaced or deleted, and the same queries, in every mode, must never return a
 * passage (text or snippet) holding an old span.
 */
export async function checkStaleMemory(
  library: SpaceLibrary,
  space: string,
  set: LabelledSet,
  ids: ReadonlyMap<string, string>,
  modes: readonly SearchMode[] = SEARCH_MODES,
): Promise<StaleReport> {
  const before = new Map<SearchMode, number>();
  for (const mode of modes) {
    const { searches, withOld } = await staleSearches(library, space, set, mode);
    before.set(mode, searches === 0 ? 0 : withOld / searches);
  }
  for (const c of set.stale) {
    const id = ids.get(c.before.key);
    if (id === undefined) throw new Error(`stale document ${c.before.key} was not ingested`);
    if (c.after) await library.replaceDocument(space, id, c.after.input);
    else await library.deleteDocument(space, id);
  }
  const reports: StaleModeReport[] = [];
  for (const mode of modes) {
    const after = await staleSearches(library, space, set, mode);
    reports.push({
      mode,
      newTextFound: after.newSearches === 0 ? 1 : after.newFound / after.newSearches,
      searches: after.searches,
      foundBeforeChange: before.get(mode)!,
      resultsChecked: after.results,
      staleResults: after.staleResults,
      rejectionRate: after.searches === 0 ? 1 : (after.searches - after.withOld) / after.searches,
    });
  }
  const replaced = set.stale.filter((c) => c.after !== null).length;
  const searches = reports.reduce((sum, r) => sum + r.searches, 0);
  const clean = reports.reduce((sum, r) => sum + r.rejectionRate * r.searches, 0);
  return {
    replaced,
    deleted: set.stale.length - replaced,
    queries: set.stale.reduce((sum, c) => sum + c.queries.length, 0),
    modes: reports,
    rejectionRate: searches === 0 ? 1 : clean / searches,
    staleResults: reports.reduce((sum, r) => sum + r.staleResults, 0),
  };
}

/** The whole evaluation on a fresh space of `library`: ingest, queries per mode, stale memory. */
export async function evaluateSpace(library: SpaceLibrary, set: LabelledSet, options: EvaluateSpaceOptions = {}): Promise<EvalReport> {
  const space = options.space ?? 'svc-eval';
  const modes = options.modes ?? SEARCH_MODES;
  const progress = options.onProgress;
  const record = await library.createSpace(space);
  const documents = [...set.documents, ...set.stale.map((c) => c.before)];
  const { ids, report: ingest } = await ingestDocuments(library, space, documents);
  progress?.(`ingested ${ingest.documents} documents, ${ingest.chunks} chunks, ${(ingest.bytes / 1e3).toFixed(0)} kB at ${ingest.mbPerSecond.toFixed(2)} MB/s`);
  const stale = await checkStaleMemory(library, space, set, ids, modes);
  progress?.(`stale memory: ${stale.staleResults} stale results, rejection ${(stale.rejectionRate * 100).toFixed(1)}%`);
  const modeReports = await runLabelledQueries(library, space, set, ids, { modes, ...(progress ? { onProgress: progress } : {}) });
  const byMode = new Map(modeReports.map((r) => [r.mode, r]));
  const hybrid = byMode.get('hybrid');
  const bm25 = byMode.get('bm25');
  const dense = byMode.get('dense');
  const chunks = set.documents.reduce((sum, doc) => sum + doc.input.chunks.length, 0);
  return {
    space,
    embedder: record.embedder,
    dimensions: record.dimensions,
    set: {
      seed: set.seed,
      documents: set.documents.length,
      chunks,
      queries: set.queries.length,
      queriesByKind: QUERY_KINDS.map((kind) => ({ kind, queries: set.queries.filter((q) => q.kind === kind).length })),
      staleDocuments: set.stale.length,
      staleQueries: stale.queries,
    },
    ingest,
    modes: modeReports,
    stale,
    hybridBeatsBoth: hybrid && bm25 && dense ? hybrid.recallAt10 > bm25.recallAt10 && hybrid.recallAt10 > dense.recallAt10 : null,
    fusion: fusionReport(modeReports),
  };
}
