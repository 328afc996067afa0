import { useEffect, useRef, useState } from 'preact/hooks';
import { deleteJson, modelPath, type ModelInfo } from './api-client.ts';
import { formatBytes } from './format.ts';

/**
 * Delete for a model in svc's own folder (`DELETE /v1/models/{id}`), asked twice: the first
 * click turns the button into "Delete from disk? [Delete] [Keep]", with Keep focused so a
 * stray Enter keeps the file. Models of Ollama, LM Studio or the Hugging Face cache belong to
 * those tools and get no button (their Source cell says whose they are). The daemon refuses a
 * loaded model; its words are shown as they come.
 */
export function ModelDeleteButton({ model, reachable, onDeleted }: { model: ModelInfo; reachable: boolean; onDeleted: (id: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => { if (confirming) keep.current?.focus(); }, [confirming]);
  if (model.source !== 'svc') return null;

  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await deleteJson(modelPath(model.id));
      setConfirming(false);
      onDeleted(model.id);
    } catch (e) {
      setError((e as Error).message);
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {confirming
        ? (
          <span role="group" aria-label={`Delete ${model.id}`} class="confirm-inline">
            <span>Delete {formatBytes(model.size_bytes)} from disk?</span>{' '}
            <button type="button" class="small danger-solid" data-model-action="confirm-delete" disabled={busy || !reachable} onClick={() => void remove()}>{busy ? 'Deleting…' : 'Delete'}</button>{' '}
            <button type="button" class="small" ref={keep} disabled={busy} onClick={() => setConfirming(false)}>Keep</button>
          </span>
        )
        : <button type="button" class="small danger" data-model-action="delete" aria-label={`Delete ${model.id}`} disabled={!reachable} onClick={() => { setError(undefined); setConfirming(true); }}>Delete</button>}
      {error !== undefined && <span role="alert" class="error inline">{error}</span>}
    </>
  );
}
