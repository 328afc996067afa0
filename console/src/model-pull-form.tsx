import { useRef, useState } from 'preact/hooks';
import { postStream, type PullProgressEvent } from './api-client.ts';
import { formatBytes } from './format.ts';

/**
 * "Pull a model" on the Runtime page: `POST /v1/models/pull` with the reference typed, its
 * progress drawn from the stream's events (docs/models.md), Cancel closing the request (the
 * daemon stops the download and keeps the partial file, so pulling again resumes it).
 */
type PullState =
  | { phase: 'idle' }
  | { phase: 'pulling'; words: string; id?: string; completed: number; total: number | null }
  | { phase: 'done'; id: string }
  | { phase: 'cancelled' }
  | { phase: 'failed'; message: string };

/** What the live region says: one line per phase, not every byte count. */
function phaseWords(event: PullProgressEvent): string | undefined {
  switch (event.status) {
    case 'resolved': return `Found ${event.id ?? 'the model'}; downloading…`;
    case 'present': return `${event.file ?? 'A file'} is already here.`;
    case 'checking': return 'Checking what was downloaded before…';
    case 'retrying': return 'The connection dropped; trying again…';
    case 'restarting': return 'Starting the download over…';
    case 'verifying': return 'Verifying the download…';
    default: return undefined;
  }
}

/** `completed of total (percent)`, or the bytes alone while the size is not known. */
export function progressText(completed: number, total: number | null): string {
  if (total === null || total <= 0) return `${formatBytes(completed)} downloaded`;
  return `${formatBytes(completed)} of ${formatBytes(total)} (${Math.min(100, Math.floor((completed / total) * 100))}%)`;
}

export function ModelPullForm({ reachable, onPulled }: { reachable: boolean; onPulled: (id: string) => void }) {
  const [reference, setReference] = useState('');
  const [state, setState] = useState<PullState>({ phase: 'idle' });
  const abort = useRef<AbortController | undefined>(undefined);

  const pull = async (event: Event) => {
    event.preventDefault();
    const model = reference.trim();
    if (model === '') {
      setState({ phase: 'failed', message: 'Type a model reference first, for example hf:owner/repo:Q4_K_M.' });
      return;
    }
    const controller = new AbortController();
    abort.current = controller;
    // Bytes per file (a split model has several), added up against the resolved total.
    const files = new Map<string, number>();
    let total: number | null = null;
    let id: string | undefined;
    let words = 'Asking the hub for the model…';
    setState({ phase: 'pulling', words, completed: 0, total: null });
    try {
      await postStream('/v1/models/pull', { model }, (data) => {
        const e = data as PullProgressEvent;
        if (e.status === 'success') {
          id = e.id;
          return;
        }
        if (e.status === 'resolved') {
          id = e.id;
          total = e.total ?? null;
        }
        if (e.file !== undefined && typeof e.completed === 'number') files.set(e.file, e.completed);
        if (e.status === 'present' && e.file !== undefined && typeof e.total === 'number') files.set(e.file, e.total);
        words = phaseWords(e) ?? words;
        const completed = [...files.values()].reduce((n, b) => n + b, 0);
        setState({ phase: 'pulling', words, ...(id === undefined ? {} : { id }), completed, total });
      }, controller.signal);
      if (id === undefined) throw new Error('The daemon ended the pull without naming the model.');
      setState({ phase: 'done', id });
      setReference('');
      onPulled(id);
    } catch (error) {
      if (controller.signal.aborted) setState({ phase: 'cancelled' });
      else setState({ phase: 'failed', message: (error as Error).message });
    } finally {
      abort.current = undefined;
    }
  };

  const pulling = state.phase === 'pulling';
  return (
    <form class="pull-form" onSubmit={(e) => void pull(e)} aria-labelledby="pull-title">
      <h3 id="pull-title">Pull a model</h3>
      <label for="pull-reference">Model reference</label>
      <div class="row">
        <input
          id="pull-reference" type="text" name="model" class="pull-reference" autoComplete="off" spellcheck={false}
          placeholder="hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M" aria-describedby="pull-hint"
          value={reference} disabled={pulling} onInput={(e) => setReference((e.target as HTMLInputElement).value)}
        />
        <button type="submit" data-testid="pull" disabled={pulling || !reachable}>{pulling ? 'Pulling…' : 'Pull'}</button>
        {pulling && <button type="button" data-testid="pull-cancel" onClick={() => abort.current?.abort()}>Cancel</button>}
      </div>
      <p id="pull-hint" class="muted">
        A Hugging Face model as <code>hf:owner/repo:QUANT</code> or <code>hf:owner/repo/file.gguf</code>, or an <code>https://</code> link to a .gguf file. It is saved in svc&apos;s models folder.
      </p>
      {pulling && (
        <div class="progress-row">
          <label for="pull-progress">{state.id ?? 'Pulling'}</label>
          {state.total === null
            ? <progress id="pull-progress" />
            : <progress id="pull-progress" value={state.completed} max={Math.max(1, state.total)} />}
          <span data-testid="pull-bytes">{progressText(state.completed, state.total)}</span>
        </div>
      )}
      <p role="status" class="pull-status" data-testid="pull-status">
        {state.phase === 'pulling' && state.words}
        {state.phase === 'done' && `Pulled ${state.id}. It is in the table below.`}
        {state.phase === 'cancelled' && 'Pull cancelled. What was downloaded is kept: pulling the same model again resumes it.'}
      </p>
      {state.phase === 'failed' && <p role="alert" class="error" data-testid="pull-error">The pull failed: {state.message}</p>}
    </form>
  );
}
