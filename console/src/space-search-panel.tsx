import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { postJson, spacePath } from './api-client.ts';
import { HighlightedSnippet, passagePlace } from './highlighted-snippet.tsx';
import { queryMarks } from './query-marks.ts';
import { describeScore, scoreLegend, type SearchMode } from './search-score.ts';
// The daemon's own wire type (type-only: nothing of the server is bundled).
import type { SearchResult } from '../../src/spaces/space-types.ts';

const MODES = [
  { value: 'hybrid', label: 'Hybrid (words + meaning, fused)' },
  { value: 'bm25', label: 'BM25 (words)' },
  { value: 'dense', label: 'Dense (meaning)' },
] as const;

interface SearchAnswer {
  query: string;
  mode: SearchMode;
  data: SearchResult[];
  /** Set when a reranker ordered the results (the space's default, docs/spaces.md "Rerank"). */
  reranker?: string;
}

/** A textarea as tall as its text: no line hidden behind a scroll bar. */
function fitHeight(element: HTMLTextAreaElement): void {
  element.style.height = 'auto';
  element.style.height = `${element.scrollHeight + 2}px`;
}

/**
 * A space's search. The query box is a textarea that grows with what is typed, so a long query
 * is seen whole; Enter searches and Shift+Enter adds a line, as in the chat composer (an Enter
 * that ends an IME composition never searches).
 */
export function SpaceSearchPanel({ space }: { space: string }) {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<SearchMode>('hybrid');
  const [topK, setTopK] = useState(8);
  const [results, setResults] = useState<SearchAnswer | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const box = useRef<HTMLTextAreaElement>(null);

  // Grown to its content (its scrollHeight) as it is typed, and again when its width changes
  // (a window resized, a phone turned): the same text takes more lines in a narrower box.
  useLayoutEffect(() => { if (box.current !== null) fitHeight(box.current); }, [query]);
  useEffect(() => {
    const element = box.current;
    if (element === null || typeof ResizeObserver === 'undefined') return undefined;
    let width = element.clientWidth;
    const observer = new ResizeObserver(() => {
      if (element.clientWidth === width) return;
      width = element.clientWidth;
      fitHeight(element);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const search = async () => {
    if (query.trim() === '' || busy) return;
    setBusy(true);
    setError(undefined);
    try {
      setResults(await postJson<SearchAnswer>(spacePath(space, '/search'), { query, mode, top_k: topK }));
    } catch (e) {
      setError(`The search failed: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form onSubmit={(event) => { event.preventDefault(); void search(); }}>
        <label for="search-query">Query</label>
        <textarea
          id="search-query"
          ref={box}
          rows={1}
          value={query}
          aria-describedby="search-query-hint"
          onInput={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key !== 'Enter' || e.shiftKey || e.isComposing || e.keyCode === 229) return;
            e.preventDefault();
            void search();
          }}
          maxLength={4000}
        />
        <p class="muted hint" id="search-query-hint">Enter searches; Shift+Enter adds a line.</p>
        <fieldset class="row modes">
          <legend>Mode</legend>
          {MODES.map((m) => (
            <label key={m.value} class="choice">
              <input type="radio" name="search-mode" value={m.value} checked={mode === m.value} onChange={() => setMode(m.value)} /> {m.label}
            </label>
          ))}
        </fieldset>
        <div class="row">
          <label for="search-top-k">Results</label>
          <input id="search-top-k" type="number" min={1} max={100} value={topK} onInput={(e) => setTopK(Math.min(100, Math.max(1, Number(e.currentTarget.value) || 1)))} />
          <button type="submit" id="search-run" disabled={busy || query.trim() === ''}>{busy ? 'Searching…' : 'Search'}</button>
        </div>
      </form>
      {error !== undefined && <p role="alert" class="error" id="search-error">{error}</p>}
      {/* Always mounted (see upload-status): the count of each new search is announced. */}
      <p class="muted" aria-live="polite" id="search-status">
        {results !== undefined && <>{results.data.length} result{results.data.length === 1 ? '' : 's'} for <q>{results.query}</q> ({results.mode}{results.reranker === undefined ? '' : `, reranked by ${results.reranker}`})</>}
      </p>
      {results !== undefined && results.data.length > 0 && (
        <>
          <p class="muted score-legend" id="score-legend">{scoreLegend(results.mode, results.reranker)}</p>
          <ol class="results" id="search-results">
            {/* Each item's rank said by `value`: a list whose items Preact reorders can keep stale numbers in Chromium. */}
            {results.data.map((r, i) => (
              <li key={r.chunk_id} value={i + 1} data-chunk={r.chunk_id}>
                <div><strong>{r.title ?? r.source ?? r.document_id}</strong>{r.source !== null && r.title !== null && <span class="muted"> · {r.source}</span>}</div>
                {passagePlace(r) !== '' && <div class="place">{passagePlace(r)}</div>}
                <p class="snippet"><HighlightedSnippet text={r.snippet} marks={r.snippet_marks} shown={queryMarks(r.snippet, r.snippet_marks, results.query)} /></p>
                <div class="muted score">{describeScore(r, results.mode)}</div>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
