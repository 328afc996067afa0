import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { fetchSpaces, getJson, postFiles, postJson, spacePath, type SpaceRecord } from '../api-client.ts';
import { useConnection } from '../connection-state.ts';
import { formatBytes } from '../format.ts';
import { HighlightedSnippet, passagePlace } from '../highlighted-snippet.tsx';
// The daemon's own wire types (type-only imports: nothing of the server is bundled).
import type { ChunkRecord, DocumentRecord, SearchResult } from '../../../src/spaces/space-types.ts';

/** An ingest job (docs/spaces.md, "Records"): what an upload became. */
interface IngestJob {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  progress: { files_total: number; files_done: number; text_bytes_total: number; text_bytes_done: number };
  files: { filename: string | null; status: string; error: { code: string; message: string } | null }[];
}

/** Chunks asked for at once (the API's `limit`); a document can have thousands, "More chunks" asks for the next page. */
const CHUNKS_PAGE = 100;
/** Characters of each chunk's text shown in the list. */
const CHUNK_PREVIEW = 300;

const MODES = [
  { value: 'hybrid', label: 'Hybrid (BM25 + dense, fused)' },
  { value: 'bm25', label: 'BM25 (words)' },
  { value: 'dense', label: 'Dense (meaning)' },
] as const;

/** How often a running ingest job is read again. */
const JOB_POLL_MS = 250;

export function SpacesPage() {
  const [spaces, setSpaces] = useState<SpaceRecord[] | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();

  const refresh = useCallback(async () => {
    try {
      setSpaces((await fetchSpaces()).data);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);
  useEffect(() => { void refresh(); }, [refresh]);
  // Back from an outage (connection-state.ts): the list may have changed meanwhile; read it again.
  const { generation } = useConnection();
  useEffect(() => {
    if (generation === 0) return;
    setError(undefined);
    void refresh();
  }, [generation, refresh]);

  const create = async (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') return;
    setError(undefined);
    try {
      const space = await postJson<SpaceRecord>('/api/spaces', { name: name.trim() });
      setName('');
      setSelected(space.name);
      await refresh();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div class="spaces">
      <section class="panel" aria-labelledby="spaces-title" id="spaces-panel" aria-busy={spaces === undefined && error === undefined}>
        <h2 id="spaces-title">Spaces</h2>
        {spaces !== undefined && spaces.length === 0 && <p>No space yet: create one below.</p>}
        {spaces !== undefined && spaces.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Spaces table">
            <table id="spaces-table">
              <thead><tr><th scope="col">Name</th><th scope="col">Documents</th><th scope="col">Chunks</th><th scope="col">Text</th><th scope="col">Embedder</th></tr></thead>
              <tbody>
                {spaces.map((s) => (
                  <tr key={s.name} aria-current={s.name === selected ? 'true' : undefined}>
                    <th scope="row">
                      <button type="button" class="link" onClick={() => setSelected(s.name)} aria-pressed={s.name === selected}>{s.name}</button>
                    </th>
                    <td>{s.document_count}</td>
                    <td>{s.chunk_count}</td>
                    <td>{formatBytes(s.text_bytes)}</td>
                    <td>{s.embedder}{s.reindex_required === true && <span class="badge bad">reindex required</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <form class="row" onSubmit={create}>
          <label for="space-name">New space</label>
          <input id="space-name" type="text" class="medium" value={name} onInput={(e) => setName(e.currentTarget.value)} maxLength={200} />
          <button type="submit" id="space-create" disabled={name.trim() === ''}>Create</button>
        </form>
        {error !== undefined && <p role="alert" class="error" id="spaces-error">{error}</p>}
      </section>
      {selected !== undefined && <SpaceView key={selected} space={selected} onChanged={refresh} />}
    </div>
  );
}

/** One space: upload into it, what it holds, and search. */
function SpaceView({ space, onChanged }: { space: string; onChanged: () => Promise<void> }) {
  const [documents, setDocuments] = useState<{ data: DocumentRecord[]; next: string | null } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const loadDocuments = useCallback(async (after?: string) => {
    try {
      const page = await getJson<{ data: DocumentRecord[]; next: string | null }>(spacePath(space, `/documents?limit=100${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`));
      setDocuments((current) => (after === undefined || current === undefined ? page : { data: [...current.data, ...page.data], next: page.next }));
    } catch (e) {
      setError((e as Error).message);
    }
  }, [space]);
  useEffect(() => { void loadDocuments(); }, [loadDocuments]);

  const uploaded = async () => {
    await loadDocuments();
    await onChanged();
  };

  return (
    <>
      <h2 class="space-heading">Space <q id="space-selected">{space}</q></h2>
      <UploadPanel space={space} onUploaded={uploaded} />
      <section class="panel" aria-labelledby="documents-title">
        <h2 id="documents-title">Documents</h2>
        {error !== undefined && <p role="alert" class="error">{error}</p>}
        {documents !== undefined && documents.data.length === 0 && <p>No documents yet.</p>}
        {documents !== undefined && documents.data.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Documents table">
            <table id="documents-table">
              <caption>Each document is cut into chunks (passages of at most 1,000 characters) that search returns.</caption>
              <thead><tr><th scope="col">Title</th><th scope="col">Source</th><th scope="col">Format</th><th scope="col">Chunks</th><th scope="col">Pages</th><th scope="col">Text</th><th scope="col">Added</th></tr></thead>
              <tbody>
                {documents.data.map((d) => <DocumentRow key={d.id} space={space} document={d} />)}
              </tbody>
            </table>
          </div>
        )}
        {documents?.next != null && <button type="button" onClick={() => loadDocuments(documents.next ?? undefined)}>More documents</button>}
      </section>
      <SearchPanel space={space} />
    </>
  );
}

/**
 * A document's row; its Chunks button lists the chunks below it, a page at a time
 * (`GET …/documents/:id/chunks`, "More chunks" follows `next`). One request at a time: a
 * close and reopen while a page is on its way waits for it rather than asking again.
 */
function DocumentRow({ space, document: d }: { space: string; document: DocumentRecord }) {
  const [chunks, setChunks] = useState<{ data: ChunkRecord[]; next: string | null } | undefined>();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(false);
  const inFlight = useRef(false);
  const loadChunks = async (after?: string) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setLoading(true);
    setError(undefined);
    try {
      const query = new URLSearchParams({ limit: String(CHUNKS_PAGE), ...(after === undefined ? {} : { after }) });
      const page = await getJson<{ data: ChunkRecord[]; next: string | null }>(spacePath(space, `/documents/${encodeURIComponent(d.id)}/chunks?${query}`));
      setChunks((previous) => ({ data: after === undefined ? page.data : [...(previous?.data ?? []), ...page.data], next: page.next }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      inFlight.current = false;
      setLoading(false);
    }
  };
  const toggle = () => {
    setOpen(!open);
    if (!open && chunks === undefined) void loadChunks();
  };
  const listId = `chunks-${d.id}`;
  return (
    <>
      <tr data-document={d.id}>
        <th scope="row">{d.title ?? <span class="muted">untitled</span>}</th>
        <td>{d.source ?? '—'}</td>
        <td>{d.format}</td>
        <td><button type="button" class="link" aria-expanded={open} aria-controls={listId} onClick={toggle}>{d.chunk_count} chunk{d.chunk_count === 1 ? '' : 's'}</button></td>
        <td>{d.pages ?? '—'}</td>
        <td>{formatBytes(d.text_bytes)}</td>
        <td>{d.created_at.slice(0, 19).replace('T', ' ')}</td>
      </tr>
      {open && (
        <tr class="chunk-row">
          <td colSpan={7} id={listId}>
            {error !== undefined && <p role="alert" class="error">{error}</p>}
            {loading && chunks === undefined && <p class="muted">Loading…</p>}
            {chunks !== undefined && (
              <ol class="chunks" start={0}>
                {chunks.data.map((c) => (
                  <li key={c.id} value={c.position} data-chunk={c.id}>
                    {passagePlace(c) !== '' && <div class="place">{passagePlace(c)}</div>}
                    <p class="snippet">{c.text.length > CHUNK_PREVIEW ? `${c.text.slice(0, CHUNK_PREVIEW)}…` : c.text}</p>
                  </li>
                ))}
              </ol>
            )}
            {chunks?.next != null && (
              <p>
                <span class="muted">{chunks.data.length} of {d.chunk_count} chunks shown. </span>
                <button type="button" class="chunks-more" disabled={loading} onClick={() => void loadChunks(chunks.next ?? undefined)}>More chunks</button>
              </p>
            )}
            {chunks === undefined && error !== undefined && !loading && <button type="button" onClick={() => void loadChunks()}>Try again</button>}
          </td>
        </tr>
      )}
    </>
  );
}

type UploadState =
  | { phase: 'sending'; sent: number; total: number; names: string[] }
  | { phase: 'ingesting'; job: IngestJob; names: string[] }
  | { phase: 'done'; job: IngestJob; names: string[] };

/**
 * Files dropped on the zone or chosen with the picker (the keyboard's way in) are uploaded at
 * once: the bytes sent (XMLHttpRequest's upload progress), then the ingest job the daemon
 * answers with (202), read again until it ends (files and extracted text embedded so far).
 */
function UploadPanel({ space, onUploaded }: { space: string; onUploaded: () => Promise<void> }) {
  const [state, setState] = useState<UploadState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [dragging, setDragging] = useState(false);
  const alive = useRef(true);
  useEffect(() => () => { alive.current = false; }, []);

  const upload = async (files: File[]) => {
    if (files.length === 0) return;
    const names = files.map((f) => f.name);
    setError(undefined);
    setState({ phase: 'sending', sent: 0, total: files.reduce((s, f) => s + f.size, 0), names });
    try {
      let job = await postFiles<IngestJob>(spacePath(space, '/documents'), files, (sent, total) => setState({ phase: 'sending', sent, total, names }));
      while (alive.current && (job.status === 'queued' || job.status === 'running')) {
        setState({ phase: 'ingesting', job, names });
        await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
        job = await getJson<IngestJob>(spacePath(space, `/jobs/${encodeURIComponent(job.id)}`));
      }
      if (!alive.current) return;
      setState({ phase: 'done', job, names });
      await onUploaded();
    } catch (e) {
      if (!alive.current) return;
      setState(undefined);
      setError((e as Error).message);
    }
  };

  const busy = state !== undefined && state.phase !== 'done';
  return (
    <section class="panel" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload</h2>
      <div
        class={dragging ? 'drop-zone dragging' : 'drop-zone'}
        id="drop-zone"
        onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          if (!busy) void upload([...(e.dataTransfer?.files ?? [])]);
        }}
      >
        <p>Drop files here (text, Markdown, HTML, PDF, DOCX, CSV, JSON), or</p>
        <label for="spaces-file" class="file-label">choose files</label>
        <input
          id="spaces-file"
          type="file"
          multiple
          disabled={busy}
          onChange={(e) => {
            const input = e.currentTarget;
            void upload([...(input.files ?? [])]).finally(() => { input.value = ''; });
          }}
        />
      </div>
      {/* Mounted from the start, its text changed per phase: a live region created together with its content is not announced. */}
      <p class="muted" aria-live="polite" id="upload-status">{uploadStatus(state)}</p>
      {state !== undefined && <UploadProgress state={state} />}
      {error !== undefined && <p role="alert" class="error" id="upload-error">{error}</p>}
    </section>
  );
}

/** What the upload's live region says: one line per phase, not every progress event. */
function uploadStatus(state: UploadState | undefined): string {
  if (state === undefined) return '';
  const names = state.names.join(', ');
  if (state.phase === 'sending') return `Sending ${names}…`;
  if (state.phase === 'ingesting') return `Extracting and embedding ${names}…`;
  const outcomes = new Map<string, number>();
  for (const f of state.job.files) outcomes.set(f.status, (outcomes.get(f.status) ?? 0) + 1);
  return `Ingest ${state.job.status}: ${[...outcomes].map(([status, n]) => `${n} ${status}`).join(', ')}.`;
}

function UploadProgress({ state }: { state: UploadState }) {
  const names = state.names.join(', ');
  if (state.phase === 'sending') {
    return (
      <div class="progress-row">
        <label for="upload-progress">Sending {names}</label>
        <progress id="upload-progress" value={state.sent} max={Math.max(1, state.total)} />
        <span>{formatBytes(state.sent)} of {formatBytes(state.total)}</span>
      </div>
    );
  }
  const { progress, status, files } = state.job;
  return (
    <div id="upload-job" data-status={status}>
      <div class="progress-row">
        <label for="ingest-progress">{state.phase === 'done' ? `Ingest ${status}` : 'Extracting and embedding'}: {progress.files_done} of {progress.files_total} files</label>
        <progress id="ingest-progress" value={progress.text_bytes_done} max={Math.max(1, progress.text_bytes_total)} />
        <span>{formatBytes(progress.text_bytes_done)} of {formatBytes(progress.text_bytes_total)} of text</span>
      </div>
      {state.phase === 'done' && (
        <ul class="upload-files">
          {files.map((f, i) => (
            <li key={i}>
              {f.filename ?? `file ${i + 1}`}: <strong>{f.status}</strong>
              {f.error !== null && ` (${f.error.message})`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function SearchPanel({ space }: { space: string }) {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<(typeof MODES)[number]['value']>('hybrid');
  const [topK, setTopK] = useState(8);
  const [results, setResults] = useState<{ query: string; mode: string; data: SearchResult[] } | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const search = async (event: Event) => {
    event.preventDefault();
    if (query.trim() === '') return;
    setBusy(true);
    setError(undefined);
    try {
      setResults(await postJson<{ query: string; mode: string; data: SearchResult[] }>(spacePath(space, '/search'), { query, mode, top_k: topK }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form onSubmit={search}>
        <label for="search-query">Query</label>
        <input id="search-query" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} maxLength={4000} />
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
        {results !== undefined && <>{results.data.length} result{results.data.length === 1 ? '' : 's'} for <q>{results.query}</q> ({results.mode})</>}
      </p>
      {results !== undefined && (
        <>
          <ol class="results" id="search-results">
            {results.data.map((r) => (
              <li key={r.chunk_id} data-chunk={r.chunk_id}>
                <div><strong>{r.title ?? r.source ?? r.document_id}</strong>{r.source !== null && r.title !== null && <span class="muted"> · {r.source}</span>}</div>
                {passagePlace(r) !== '' && <div class="place">{passagePlace(r)}</div>}
                <p class="snippet"><HighlightedSnippet text={r.snippet} marks={r.snippet_marks} /></p>
                <div class="muted">score {r.score.toFixed(4)} · BM25 rank {r.bm25_rank ?? '—'} · dense rank {r.dense_rank ?? '—'}</div>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
