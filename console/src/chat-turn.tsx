import { useState } from 'preact/hooks';
import { MarkdownView } from './markdown-view.tsx';

/**
 * One turn of a conversation. `finish` says why a reply ended early: `stopped` when the user
 * pressed Stop, `length` when `max_tokens` cut it (the API's `finish_reason: "length"`).
 */
export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
  finish?: 'stopped' | 'length';
}

const FINISH_WORDS = {
  stopped: 'Stopped: you pressed Stop before the reply ended.',
  length: 'Cut at Max tokens: raise it to let the reply finish.',
} as const;

/**
 * A message as the chat tools people know draw it: the user's text as written, a reply as
 * Markdown with copy and (when `onRegenerate` is given) regenerate, and a marker when it ended
 * early. The class stays `message <role>` so a test or a style can find turns by role.
 */
export function ChatTurnView({ turn, streaming = false, onRegenerate, busy = false }: { turn: ChatTurn; streaming?: boolean; onRegenerate?: () => void; busy?: boolean }) {
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(turn.content);
      setStatus('Copied.');
    } catch {
      setStatus('The browser refused the clipboard; select the text and copy it.');
    }
  };
  return (
    <li class={`message ${turn.role}`} aria-busy={streaming ? 'true' : undefined}>
      <span class="role">{turn.role === 'user' ? 'you' : 'assistant'}</span>
      {turn.role === 'user' ? <div class="user-text">{turn.content}</div> : <MarkdownView text={turn.content} />}
      {turn.finish !== undefined && <p class="finish-marker" data-finish={turn.finish}>{FINISH_WORDS[turn.finish]}</p>}
      {turn.role === 'assistant' && !streaming && (
        <div class="message-actions">
          <button type="button" class="copy-reply" onClick={copy}>Copy</button>
          {onRegenerate !== undefined && <button type="button" class="regenerate" disabled={busy} onClick={onRegenerate}>Regenerate</button>}
          <span role="status" class="muted">{status}</span>
        </div>
      )}
    </li>
  );
}
