import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson, postFiles, spacePath } from './api-client.ts';
import { formatBytes } from './format.ts';

/** An ingest job (docs/spaces.md, "Records"): what an upload became. */
export interface IngestJob {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  progress: { files_total: number; files_done: number; text_bytes_total: number; text_bytes_done: number };
  files: { filename: string | null; status: string; error: { code: string; message: string } | null }[];
}

/** How often a running ingest job is read again. */
const JOB_POLL_MS = 250;

type UploadState =
  | { phase: 'sending'; sent: number; total: number; names: string[] }
  | { phase: 'ingesting'; job: IngestJob; names: string[] }
  | { phase: 'done'; job: IngestJob; names: string[] };

/**
 * Files dropped on the zone or chosen with the picker (the keyboard's way in) are uploaded at
 * once: the bytes sent (XMLHttpRequest's upload progress), then the ingest job the daemon
 * answers with (202), read again until it ends (files and extracted text embedded so far).
 * What is happening is said once, in the live region; the bars beside it only measure.
 */
export function SpaceUploadPanel({ space, onUploaded }: { space: string; onUploaded: () => Promise<void> }) {
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
      setError(`The upload failed: ${(e as Error).message}`);
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
      <p aria-live="polite" id="upload-status" class="upload-status" data-phase={state?.phase}>{uploadStatus(state)}</p>
      {state !== undefined && <UploadProgress state={state} />}
      {error !== undefined && <p role="alert" class="error" id="upload-error">{error}</p>}
    </section>
  );
}

/** A file's outcome in words: "pump.md added", "photo.png failed (why)". */
function fileOutcome(file: IngestJob['files'][number], index: number): string {
  return `${file.filename ?? `file ${index + 1}`} ${file.status}${file.error === null ? '' : ` (${file.error.message})`}`;
}

/** The one sentence that says where the upload is: one per phase, not every progress event. */
function uploadStatus(state: UploadState | undefined): string {
  if (state === undefined) return '';
  const names = state.names.join(', ');
  if (state.phase === 'sending') return `Sending ${names}…`;
  if (state.phase === 'ingesting') return `Extracting and embedding ${names}…`;
  const { files } = state.job;
  if (files.length === 1) return `Done: ${fileOutcome(files[0]!, 0)}.`;
  const outcomes = new Map<string, number>();
  for (const f of files) outcomes.set(f.status, (outcomes.get(f.status) ?? 0) + 1);
  return `Done: ${[...outcomes].map(([status, n]) => `${n} ${status}`).join(', ')}.`;
}

/** The measures of the phase under way; once done, each file's outcome when there were several. */
function UploadProgress({ state }: { state: UploadState }) {
  if (state.phase === 'sending') {
    return (
      <div class="progress-row">
        <label for="upload-progress">Bytes sent</label>
        <progress id="upload-progress" value={state.sent} max={Math.max(1, state.total)} />
        <span>{formatBytes(state.sent)} of {formatBytes(state.total)}</span>
      </div>
    );
  }
  const { progress, status, files } = state.job;
  return (
    <div id="upload-job" data-status={status}>
      {state.phase === 'ingesting' && (
        <div class="progress-row">
          <label for="ingest-progress">Text embedded</label>
          <progress id="ingest-progress" value={progress.text_bytes_done} max={Math.max(1, progress.text_bytes_total)} />
          <span>{formatBytes(progress.text_bytes_done)} of {formatBytes(progress.text_bytes_total)} · {progress.files_done} of {progress.files_total} files</span>
        </div>
      )}
      {state.phase === 'done' && files.length > 1 && (
        <ul class="upload-files">
          {files.map((f, i) => <li key={i}>{fileOutcome(f, i)}</li>)}
        </ul>
      )}
    </div>
  );
}
