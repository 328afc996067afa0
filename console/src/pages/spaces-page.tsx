import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiCallError, deleteJson, fetchSpaces, getJson, postJson, spacePath, type SpaceRecord } from '../api-client.ts';
import { useConnection } from '../connection-state.ts';
import { formatBytes, formatTimestamp, plural } from '../format.ts';
import { passagePlace } from '../highlighted-snippet.tsx';
import { SpaceSearchPanel } from '../space-search-panel.tsx';
import { SpaceUploadPanel } from '../space-upload-panel.tsx';
// The daemon's own wire types (type-only imports: nothing of the server is bundled).
import type { ChunkRecord, DocumentRecord } from '../../../src/spaces/space-types.ts';

/** Chunks asked for at once (the API's `limit`); a document can have thousands, "More chunks" asks for the next page. */
const CHUNKS_PAGE = 100;
/** Characters of each chunk's text shown in the list. */
const CHUNK_PREVIEW = 300;

export function SpacesPage() {
  const [spaces, setSpaces] = useState<SpaceRecord[] | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [said, setSaid] = useState('');

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
    setSaid('');
    try {
      const space = await postJson<SpaceRecord>('/api/spaces', { name: name.trim() });
      setName('');
      setSelected(space.name);
      await refresh();
    } catch (e) {
      setError(`The space could not be created: ${(e as Error).message}`);
    }
  };

  const title = useRef<HTMLHeadingElement>(null);
  const deleted = async (space: string) => {
    // The button that had focus goes with the space: focus goes to the list it was deleted from.
    title.current?.focus();
    setSelected(undefined);
    setSaid(`Space “${space}” deleted.`);
    await refresh();
  };

  return (
    <div class="spaces">
      <section class="panel" aria-labelledby="spaces-title" id="spaces-panel" aria-busy={spaces === undefined && error === undefined}>
        <h2 id="spaces-title" ref={title} tabIndex={-1}>Spaces</h2>
        {spaces !== undefined && spaces.length === 0 && <p>No space yet: create one below.</p>}
        {spaces !== undefined && spaces.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Spaces table">
            <table id="spaces-table">
              <thead><tr><th scope="col">Name</th><th scope="col">Documents</th><th scope="col">Chunks</th><th scope="col">Text</th><th scope="col">Embedder</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {spaces.map((s) => (
                  <tr key={s.name} aria-current={s.name === selected ? 'true' : undefined}>
                    <th scope="row">
                      <button type="button" class="link" onClick={() => { setSaid(''); setSelected(s.name); }} aria-pressed={s.name === selected}>{s.name}</button>
                    </th>
                    <td>{s.document_count}</td>
                    <td>{s.chunk_count}</td>
                    <td>{formatBytes(s.text_bytes)}</td>
                    <td>{s.embedder}{s.reindex_required === true && <span class="badge bad">reindex required</span>}</td>
                    <td>{formatTimestamp(s.created_at)}</td>
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
        {/* Mounted from the start (see upload-status): a deleted space is announced. */}
        <p class="muted" aria-live="polite" id="spaces-status">{said}</p>
      </section>
      {selected !== undefined && (
        <SpaceView key={selected} space={selected} record={spaces?.find((s) => s.name === selected)} onChanged={refresh} onDeleted={deleted} />
      )}
    </div>
  );
}

/**
 * A Delete button that asks first, in the page (not the browser's confirm box): what goes, that
 * it cannot be undone, and Delete or Cancel, Cancel focused. A refusal is said beside it in words.
 */
function ConfirmDelete({ id, label, question, run }: { id: string; label: string; question: string; run: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  // Focus follows the question: to Cancel when it is asked, back to the Delete button when it is withdrawn.
  const wasAsking = useRef(false);
  useLayoutEffect(() => {
    if (asking) cancel.current?.focus();
    else if (wasAsking.current) opener.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await run();
    } catch (e) {
      setError(`Could not delete: ${(e as Error).message}`);
      setBusy(false);
    }
  };
  if (!asking) {
    return <button type="button" class="danger small" id={id} ref={opener} onClick={() => setAsking(true)}>{label}</button>;
  }
  return (
    <div class="confirm-delete" role="group" aria-labelledby={`${id}-question`}>
      <p id={`${id}-question`}>{question} This cannot be undone.</p>
      <div class="row">
        <button type="button" class="danger-solid small" id={`${id}-confirm`} disabled={busy} onClick={() => void confirm()}>{busy ? 'Deleting…' : label}</button>
        <button type="button" class="small" ref={cancel} disabled={busy} onClick={() => { setAsking(false); setError(undefined); }}>Cancel</button>
      </div>
      {error !== undefined && <p role="alert" class="error" id={`${id}-error`}>{error}</p>}
    </div>
  );
}

/** One space: upload into it, what it holds, and search. */
function SpaceView({ space, record, onChanged, onDeleted }: { space: string; record: SpaceRecord | undefined; onChanged: () => Promise<void>; onDeleted: (space: string) => Promise<void> }) {
  const [documents, setDocuments] = useState<{ data: DocumentRecord[]; next: string | null } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [said, setSaid] = useState('');
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
  const documentsTitle = useRef<HTMLHeadingElement>(null);
  const documentDeleted = async (document: DocumentRecord) => {
    // The row that had focus goes: focus goes to the table's heading, not to the page's top.
    documentsTitle.current?.focus();
    setDocuments((current) => current === undefined ? current : { ...current, data: current.data.filter((d) => d.id !== document.id) });
    setSaid(`Deleted ${documentName(document)}.`);
    await onChanged();
  };
  const holds = record === undefined ? '' : ` and its ${plural(record.document_count, 'document')} (${plural(record.chunk_count, 'chunk')})`;

  return (
    <>
      <div class="space-heading">
        <h2>Space <q id="space-selected">{space}</q></h2>
        <ConfirmDelete
          id="space-delete"
          label="Delete space"
          question={`Delete the space “${space}”${holds}?`}
          run={async () => {
            await deleteJson(spacePath(space)).catch(unlessGone('space_not_found'));
            await onDeleted(space);
          }}
        />
      </div>
      <SpaceUploadPanel space={space} onUploaded={uploaded} />
      <section class="panel" aria-labelledby="documents-title">
        <h2 id="documents-title" ref={documentsTitle} tabIndex={-1}>Documents</h2>
        {error !== undefined && <p role="alert" class="error">{error}</p>}
        <p class="muted" aria-live="polite" id="documents-status">{said}</p>
        {documents !== undefined && documents.data.length === 0 && <p>No documents yet.</p>}
        {documents !== undefined && documents.data.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Documents table">
            <table id="documents-table">
              <caption>Each document is cut into chunks (passages of at most 1,000 characters) that search returns. Times are UTC.</caption>
              <thead><tr><th scope="col">Title</th><th scope="col">Source</th><th scope="col">Format</th><th scope="col">Chunks</th><th scope="col">Pages</th><th scope="col">Text</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {documents.data.map((d) => <DocumentRow key={d.id} space={space} document={d} onDeleted={documentDeleted} />)}
              </tbody>
            </table>
          </div>
        )}
        {documents?.next != null && <button type="button" onClick={() => loadDocuments(documents.next ?? undefined)}>More documents</button>}
      </section>
      <SpaceSearchPanel space={space} />
    </>
  );
}

/**
 * A delete's failure, unless it failed because what it deletes is gone already (another tab,
 * the CLI): then the page just catches up, as if this delete had done it.
 */
function unlessGone(code: string): (error: unknown) => void {
  return (error) => {
    if (!(error instanceof ApiCallError && error.status === 404 && error.code === code)) throw error;
  };
}

/** How a document is named to people: its title, else its source, else its id. */
function documentName(d: DocumentRecord): string {
  return `“${d.title ?? d.source ?? d.id}”`;
}

/**
 * A document's row; its Chunks button lists the chunks below it, a page at a time
 * (`GET …/documents/:id/chunks`, "More chunks" follows `next`). One request at a time: a
 * close and reopen while a page is on its way waits for it rather than asking again. Chunks are
 * numbered from 1 as people count (the API's `position` is 0-based).
 */
function DocumentRow({ space, document: d, onDeleted }: { space: string; document: DocumentRecord; onDeleted: (d: DocumentRecord) => Promise<void> }) {
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
        <td><button type="button" class="link" aria-expanded={open} aria-controls={listId} onClick={toggle}>{plural(d.chunk_count, 'chunk')}</button></td>
        <td>{d.pages ?? '—'}</td>
        <td>{formatBytes(d.text_bytes)}</td>
        <td>{formatTimestamp(d.created_at)}</td>
        <td class="actions">
          <ConfirmDelete
            id={`delete-${d.id}`}
            label="Delete"
            question={`Delete ${documentName(d)} and its ${plural(d.chunk_count, 'chunk')}? Search will no longer find them.`}
            run={async () => {
              await deleteJson(spacePath(space, `/documents/${encodeURIComponent(d.id)}`)).catch(unlessGone('document_not_found'));
              await onDeleted(d);
            }}
          />
        </td>
      </tr>
      {open && (
        <tr class="chunk-row">
          <td colSpan={8} id={listId}>
            {error !== undefined && <p role="alert" class="error">{error}</p>}
            {loading && chunks === undefined && <p class="muted">Loading…</p>}
            {chunks !== undefined && (
              <ol class="chunks">
                {chunks.data.map((c) => (
                  <li key={c.id} value={c.position + 1} data-chunk={c.id}>
                    {passagePlace(c) !== '' && <div class="place">{passagePlace(c)}</div>}
                    <p class="snippet">{c.text.length > CHUNK_PREVIEW ? `${c.text.slice(0, CHUNK_PREVIEW)}…` : c.text}</p>
                  </li>
                ))}
              </ol>
            )}
            {chunks?.next != null && (
              <p>
                <span class="muted">Chunks 1–{chunks.data.length} of {d.chunk_count} shown. </span>
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
