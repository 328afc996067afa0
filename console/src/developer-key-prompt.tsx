import { useEffect, useState } from 'preact/hooks';
import { developerKey, KEY_REQUIRED_EVENT, setDeveloperKey, type KeyRequiredDetail } from './developer-key.ts';

/**
 * Asks for a developer key once the daemon has refused a call for want of one
 * (`--require-developer-key`), keeps it for this tab and reloads, so every page starts again
 * with it. With a key kept, a one-line note offers to forget it.
 */
export function DeveloperKeyPrompt() {
  const [refusal, setRefusal] = useState<KeyRequiredDetail>();
  const [draft, setDraft] = useState('');
  const kept = developerKey() !== null;
  useEffect(() => {
    const onRefused = (event: Event) => setRefusal((event as CustomEvent<KeyRequiredDetail>).detail);
    addEventListener(KEY_REQUIRED_EVENT, onRefused);
    return () => removeEventListener(KEY_REQUIRED_EVENT, onRefused);
  }, []);
  const forget = () => {
    setDeveloperKey(null);
    location.reload();
  };
  if (refusal === undefined) {
    if (!kept) return null;
    return (
      <p class="key-note muted">
        Calls carry the developer key kept in this tab. <button type="button" class="small" id="developer-key-forget" onClick={forget}>Forget the key</button>
      </p>
    );
  }
  return (
    <section class="panel" aria-labelledby="developer-key-title" id="developer-key-prompt">
      <h2 id="developer-key-title">Developer key</h2>
      <p role="alert">
        {refusal.code === 'developer_key_required' && !kept
          ? 'This daemon runs with --require-developer-key: every call needs a developer key (svc_dk_…).'
          : `The daemon refused the key kept in this tab: ${refusal.message}`}
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          const key = draft.trim();
          if (key === '') return;
          setDeveloperKey(key);
          location.reload();
        }}
      >
        <label for="developer-key">Developer key</label>
        <input id="developer-key" type="password" autocomplete="off" spellcheck={false} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        <button type="submit" id="developer-key-save">Use this key</button>
        {kept && <button type="button" onClick={forget}>Forget the kept key</button>}
      </form>
      <p class="muted">
        Kept in this tab only (sessionStorage: gone when the tab closes) and sent as <code>Authorization: Bearer</code> with
        each call. Keys are issued at <code>/settings/api-keys</code> on the hosted tier.
      </p>
    </section>
  );
}
